// Why SSE is written by hand here and not with @fastify/sse (evaluated at 0.6.0, issue 12.10): that
// plugin ties a stream to a route handler's reply and writes each event as its own awaited write. What
// the gateway needs and it cannot do: cut a slow reader once maxStreamBufferBytes are queued (it waits
// for 'drain' without bound, so memory grows instead); send a burst of answers, or headers + priming
// event + first answer, in one write (no cork, headers go out on the first send); one keep-alive timer
// for every stream (it runs a timer per connection); streams opened and ended by a session's transport
// outside any handler. Its data also passes a serializer (JSON.stringify by default, which re-quotes our
// JSON), and Last-Event-ID replay is only a callback: the event log stays ours. A micro-benchmark (50,000
// events of 200 bytes over loopback) measured it at about the same to 1.4x the CPU per event of this class.
// So this file is only what the plugin lacks: open, write with cut-off, preface, end.
import type { ServerResponse } from 'node:http';
import { SSE_KEEPALIVE } from '../jsonrpc/sse.js';
import { AnswerHolds, type Held, type HoldOwner } from './answer-holds.js';
import { atExpiry, type ExpiryTimer } from '../auth/principal.js';

/** A POST stream's headers wait at least this long for its first event (at most twice it). */
const HEADERS_DELAY_MS = 25;

/**
 * A stream's response headers, as one flat list (see endJson): given as an object spread over the defaults, each
 * stream's headers were a new hidden class, read key by key. `extra` (the session id) must not name these.
 * `length`: a whole body's, sent in one write: nothing for a proxy to hold back, so no `X-Accel-Buffering`.
 * No `Connection: keep-alive`: Node writes the connection's own (keep-alive, or close where it will close it,
 * which a fixed header contradicted), as for every other answer. Each header given here is validated by Node
 * per response (two regular expressions, a lower-casing): two fewer on every quick SSE answer.
 */
function headerList(extra: Record<string, string>, length: string | undefined): string[] {
  const list = ['content-type', 'text/event-stream', 'cache-control', 'no-cache, no-transform'];
  if (length === undefined) list.push('x-accel-buffering', 'no');
  else list.push('content-length', length);
  for (const name in extra) list.push(name, extra[name]!);
  return list;
}

/** Every live stream of one app: their limits, and one keep-alive timer for all of them. */
export class SseHub {
  readonly maxBufferBytes: number;
  /**
   * The live streams, as a list linked through the streams themselves. Not a Set: one that every SSE
   * answer is added to and deleted from is rehashed every few dozen answers, and V8 links each replaced
   * table to its successor; once a dead table was old, it kept the next one and its streams (with their
   * responses) alive through the young collections, so every later one was promoted too (Node 22, SSE
   * answers at 64 in flight: ~10 MB promoted every half second, young collections 6 ms against 0.8 ms
   * for JSON answers; see RequestTable). A stream taken off the list forgets its neighbours, so a dead
   * one that reached the old generation keeps no live one alive.
   */
  #first: SseConnection | undefined;
  #liveCount = 0;
  /** Streams cut because their reader fell too far behind (for metrics). */
  cut = 0;
  /** POST answers held as JSON under `responseMode: auto`, until complete or their hold ends. */
  readonly holds: AnswerHolds;
  /** POST streams whose headers wait for their first event: one coarse timer for all, not one each. */
  readonly headerHolds = new AnswerHolds(HEADERS_DELAY_MS);
  /** POST streams answered to a live reader, kept resumable for a grace (none with 0): one coarse timer for all. */
  readonly answered: AnswerHolds | undefined;
  /** Bytes of those answers one session keeps at most (the oldest go first); beyond it, even one is not kept. */
  readonly answeredBytesPerSession: number;
  /** Answers kept for a grace that a session's bounds let go before it ended (for metrics). */
  answersEvicted = 0;
  readonly #timer: NodeJS.Timeout;

  constructor(maxBufferBytes: number, keepAliveMs: number, holdMs = 50, o: { answerGraceMs?: number; answerGraceBytes?: number } = {}) {
    this.maxBufferBytes = maxBufferBytes;
    this.holds = new AnswerHolds(holdMs);
    this.answered = o.answerGraceMs ? new AnswerHolds(o.answerGraceMs) : undefined;
    this.answeredBytesPerSession = o.answerGraceBytes ?? 8 * 1024 * 1024;
    // A comment line keeps idle proxies and load balancers from cutting quiet streams.
    this.#timer = setInterval(() => {
      // The next one is read first: a write may cut this one (a reader too far behind) and unlist it.
      for (let c = this.#first; c !== undefined; ) {
        const next = c.liveNext;
        c.write(SSE_KEEPALIVE);
        c = next;
      }
    }, keepAliveMs);
    this.#timer.unref();
  }

  /**
   * `flush`: send the headers now (a GET stream, which the client waits on). A POST's stream leaves
   * them to go out with its first event, which saves a write per request. `endsAt`: see SseConnection.
   */
  open(res: ServerResponse, headers: Record<string, string>, flush = true, endsAt?: number): SseConnection {
    return new SseConnection(res, this, headers, flush, endsAt);
  }

  /** How many streams are open. */
  get liveCount(): number {
    return this.#liveCount;
  }

  /** From a stream that opens. */
  enlist(c: SseConnection): void {
    c.liveNext = this.#first;
    if (this.#first !== undefined) this.#first.livePrev = c;
    this.#first = c;
    this.#liveCount++;
  }

  /** From a stream that closes; a stream not on the list is left alone. */
  delist(c: SseConnection): void {
    const { livePrev: prev, liveNext: next } = c;
    if (prev !== undefined) prev.liveNext = next;
    else if (this.#first === c) this.#first = next;
    else return;
    if (next !== undefined) next.livePrev = prev;
    c.liveNext = undefined;
    c.livePrev = undefined;
    this.#liveCount--;
  }

  close(): void {
    clearInterval(this.#timer);
    this.holds.close();
    this.headerHolds.close();
    this.answered?.close();
    const all: SseConnection[] = [];
    for (let c = this.#first; c !== undefined; c = c.liveNext) all.push(c);
    for (const c of all) c.end();
  }
}

/**
 * One live text/event-stream response. A reader that falls more than maxBufferBytes behind is cut
 * off rather than allowed to grow the gateway's memory; what it missed stays in the event store.
 */
export class SseConnection implements Held, HoldOwner {
  readonly #res: ServerResponse;
  readonly #hub: SseHub;
  #open = true;
  /** Its own holder in the hub's header holds (a hold needs no closure). */
  readonly holder: HoldOwner = this;
  holdTicket = 0;
  holdSlot = 0;
  /** Its neighbours on the hub's list of live streams (the hub's own). */
  liveNext: SseConnection | undefined = undefined;
  livePrev: SseConnection | undefined = undefined;
  /** A priming event held back until the first write (or the header flush), so it shares that write. */
  #preface = '';
  /**
   * What was written in this turn and not yet given to the response: it leaves in one write, as one
   * chunk. Joined here rather than corked, since each write to a chunked response is framed on its
   * own (size line, text, CRLF): a burst of 64 answers on a legacy stream was 192 buffers in a writev.
   */
  #pending = '';
  /**
   * Headers not yet given to the response (a POST's stream, until its first write or its hold in the
   * hub runs out): a stream that ends with everything it has to say before then goes out with a
   * Content-Length, not chunked.
   */
  #headers: Record<string, string> | undefined;
  /** The mark of the last event written (see write) that is still on its way to the socket. */
  #mark = 0;
  onclose: (() => void) | undefined;
  /**
   * Told the mark of an event once the socket has taken it: only then is it delivered. What was still
   * queued here or in the response when the stream was cut (or its client left) never reached the
   * client, and must be replayed to it.
   */
  onsent: ((mark: number) => void) | undefined;
  /** The timer that ends a GET stream when the token it was opened with expires (only such a stream has one). */
  #expiry: ExpiryTimer | undefined;

  /**
   * `endsAt`: a GET stream's token's expiry (Principal.expiresAt), when it ends: authorized once, by that token,
   * it would otherwise deliver for as long as its connection holds while every request with the token is
   * refused 401 (before 2026-12-07 it did). Its client opens it again with a fresh token.
   */
  constructor(res: ServerResponse, hub: SseHub, headers: Record<string, string>, flush = true, endsAt?: number) {
    this.#res = res;
    this.#hub = hub;
    if (flush) {
      res.writeHead(200, headerList(headers, undefined));
      res.flushHeaders();
    } else {
      this.#headers = headers;
      // A quick answer leaves with its headers in one write; a slow one must not keep the client
      // waiting for headers (clients and proxies time out on them), so they go out after a moment.
      hub.headerHolds.hold(this);
    }
    // A forwarded request (Fastify inject) has no real socket.
    if (typeof res.socket?.setNoDelay === "function") res.socket.setNoDelay(true);
    res.on('close', () => this.#closed());
    hub.enlist(this);
    if (endsAt !== undefined) atExpiry(endsAt, () => this.end(), (this.#expiry = {}));
    // The client may have gone while we were getting ready: 'close' has fired already and never will again.
    if (res.destroyed || res.writableEnded) queueMicrotask(() => this.#closed());
  }

  get open(): boolean {
    return this.#open;
  }

  /**
   * Text that must open the stream (the priming event). On a stream whose headers wait for the first
   * event it waits with them: a quick answer then leaves headers, priming event and answer in one write.
   */
  preface(text: string): void {
    if (this.#headers === undefined) this.write(text);
    else this.#preface += text;
  }

  /** The held headers, given to the response now: a stream of unknown length (chunked), or `length` bytes in all. */
  #writeHead(length?: string): ServerResponse {
    if (this.#headers) {
      this.#res.writeHead(200, headerList(this.#headers, length));
      this.#headers = undefined;
      this.#hub.headerHolds.release(this);
    }
    return this.#res;
  }

  /** `mark`: a number the caller gives the event, told to onsent once the socket has taken it (0: none). */
  write(text: string, mark = 0): boolean {
    if (!this.#open) return false;
    this.#writeHead();
    if (this.#preface) {
      text = this.#preface + text;
      this.#preface = '';
    }
    // Events written in one turn (answers to a burst of calls on a legacy stream) leave in one write.
    if (this.#pending === '') process.nextTick(() => this.#flush());
    this.#pending += text;
    if (mark > 0) this.#mark = mark;
    // Counted in characters before encoding: a bound on memory, not an exact byte count.
    if (this.#res.writableLength + this.#pending.length > this.#hub.maxBufferBytes) {
      this.#hub.cut++;
      this.abort();
      return false;
    }
    return true;
  }

  /**
   * Ends the stream at once, whatever is still queued for it (cut, or its session is gone): ended gracefully, what
   * waits for a reader that does not read would stay queued, and the connection open, for as long as it likes.
   */
  abort(): void {
    if (!this.#open) return;
    this.#pending = '';
    this.#mark = 0;
    this.#res.destroy();
    this.#closed();
  }

  /**
   * Ends the connection whatever it still holds, ended or not (abort leaves an ended one be): a newer resume
   * of its stream replaces it (LiveResumes), and an answer still queued for a reader that does not read goes.
   */
  drop(): void {
    if (this.#open) this.abort();
    else if (!this.#res.writableFinished) this.#res.destroy();
  }

  /** Ends the stream, with a last chunk in the same write when given. */
  end(last?: string): void {
    if (!this.#open) return;
    // What this turn wrote leaves with the end, in the same write.
    const text = this.#pending + this.#preface + (last ?? '');
    const sent = this.#sent();
    this.#pending = '';
    this.#preface = '';
    if (this.#headers) {
      // Nothing went out yet: the whole stream is this text, and its length is known (no chunked framing).
      this.#writeHead(String(Buffer.byteLength(text)));
    }
    if (text === '') this.#res.end(sent);
    else this.#res.end(text, sent);
    this.#closed();
  }

  /**
   * Gives what this turn wrote to the response now and waits until the socket has taken it (a replay
   * writes in slices this way, so that a log longer than the buffer bound is not cut for its length
   * alone). False once the stream is closed: cut, or the client has gone.
   */
  drained(): Promise<boolean> {
    if (!this.#open || this.#res.destroyed) return Promise.resolve(false);
    const text = this.#pending;
    if (text === '') return Promise.resolve(true);
    const sent = this.#sent();
    this.#pending = '';
    // The write's own callback, not 'drain': a response whose buffer stays under its high-water mark
    // (64 KB on Node 22, 16 KB on Node 20) never emits 'drain', and what it holds still counts against
    // the bound.
    return new Promise<boolean>((resolve) => {
      const done = (): void => {
        this.#res.off('close', done);
        resolve(this.#open && !this.#res.destroyed);
      };
      this.#res.on('close', done);
      this.#res.write(text, (error) => {
        sent?.(error);
        done();
      });
    });
  }

  #flush(): void {
    // A response destroyed in the meantime (its 'close' not emitted yet) takes no more writes.
    if (!this.#open || this.#pending === '' || this.#res.destroyed) return;
    const text = this.#pending;
    const sent = this.#sent();
    this.#pending = '';
    this.#res.write(text, sent);
  }

  /**
   * For the write of what is pending: the callback that tells onsent its last mark once the socket has
   * taken it (not when it failed: a response destroyed with writes queued calls them with an error).
   */
  #sent(): ((error?: Error | null) => void) | undefined {
    const mark = this.#mark;
    if (mark === 0 || this.onsent === undefined) return undefined;
    this.#mark = 0;
    return (error) => {
      if (!error) this.onsent?.(mark);
    };
  }

  /** The hub's header hold ran out before the first event: the headers (and a held preface) go now. */
  holdExpired(): void {
    if (!this.#open || this.#headers === undefined) return;
    if (this.#preface) this.write('');
    else this.#writeHead().flushHeaders();
  }

  #closed(): void {
    if (!this.#open) return;
    this.#open = false;
    if (this.#expiry) clearTimeout(this.#expiry.timer);
    if (this.#headers) this.#hub.headerHolds.release(this);
    this.#hub.delist(this);
    this.onclose?.();
  }
}

