import type { ServerResponse } from 'node:http';
import { isResponse, type JsonRpcMessage, type RequestId } from '../jsonrpc/types.js';
import { sseEvent, ssePriming } from '../jsonrpc/sse.js';
import { STREAMS_KEPT_PER_SESSION, type EventStore } from '../session/event-store.js';
import type { SendOptions, Transport } from '../transport/transport.js';
import type { AnswerHolds, Held, HoldOwner } from './answer-holds.js';
import { outStream, type OutStream } from './out-stream.js';
import { replayLog } from './log-replay.js';
import { LiveResumes } from './live-resumes.js';
import type { SseConnection, SseHub } from './sse-connection.js';
import { endJson } from './replies.js';
import { RequestTable } from '../jsonrpc/request-table.js';
import { clipped } from '../observability/clipped.js';

/** How a POST carrying requests is answered: a stream, one JSON body, or JSON unless it must stream. */
export type ResponseMode = 'sse' | 'json' | 'auto';

/** Reads of the log a resume makes to catch up with a stream that keeps growing, before it gives up. */
const CATCH_UP_ROUNDS = 10;

export interface StreamableTransportOptions {
  sessionId: string;
  hub: SseHub;
  events: EventStore;
  resumable: boolean;
  retryMs: number; // the priming event's retry: a stream the gateway closes early is polled again after it
  protocolVersion: () => string | undefined;
  onStreamsChanged: (delta: number) => void;
}

export class UnknownEventIdError extends Error {}

export class StreamConflictError extends Error {}

/**
 * The Streamable HTTP side of one client session. Each message the session sends goes on exactly one
 * stream: a response on the stream of the POST that carried its request, a message related to a
 * request on that request's stream while it is open, anything else on the standalone GET stream.
 * Events are numbered "<stream>_<seq>" and logged for Last-Event-ID resumption.
 */
export class StreamableSessionTransport implements Transport, HoldOwner {
  readonly #o: StreamableTransportOptions;
  readonly #streams = new RequestTable<OutStream>();
  readonly #byRequest = new RequestTable<OutStream>();
  /** Answered streams kept for resumption, oldest first. */
  readonly #done: number[] = [];
  /** Streams answered to a live reader, kept for their grace, oldest first (bounded like #done). */
  readonly #graced: number[] = [];
  /** Bytes of the answers kept on streams (their `final`): bounded by the hub's answeredBytesPerSession. */
  #finalBytes = 0;
  /** Connections a replay of the log is being written to (bound to no stream yet): close() ends them too. */
  readonly #replaying = new Set<SseConnection>();
  /** The one live resume of each stream: a newer one drops the older (see LiveResumes). */
  readonly #resumes = new LiveResumes();
  /** A standalone GET still catching up with the log (not bound yet): the slot is taken all the same. */
  #opening: SseConnection | undefined;
  /** Stream numbers unique across replicas: a session taken over never reuses an old stream's events. */
  #nextNo = Date.now() * 1000;
  #closed = false;
  onmessage?: (message: JsonRpcMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  constructor(o: StreamableTransportOptions) {
    this.#o = o;
    this.#streams.set(0, outStream(this, 0, []));
  }

  async start(): Promise<void> {}

  /** A session taken over: its streams continue after what the previous owner logged. */
  async continueFrom(events: EventStore): Promise<void> {
    if (!this.#o.resumable || !events.lastSeq) return;
    const stream = this.#streams.get(0)!;
    const [seq, lastNo] = await Promise.all([events.lastSeq(this.#o.sessionId, 0), events.lastStream?.(this.#o.sessionId) ?? 0]);
    // Above any id the old owner gave (the log may lack its last ones: expired, evicted, appends lost): numbered on from
    // the log, a resume from the client's last id skipped what is logged here. Request streams above every one the log
    // holds: by this clock alone, one behind the old owner's by the session's age reused a logged stream's key (and events).
    stream.seq = stream.delivered = Math.max(seq, Date.now() * 1000);
    this.#nextNo = Math.max(this.#nextNo, lastNo + 1);
  }

  hasPending(id: RequestId): boolean {
    return this.#byRequest.has(id);
  }

  #priming(): boolean {
    const v = this.#o.protocolVersion();
    // Older clients choke on an event with empty data.
    return this.#o.resumable && v !== undefined && v >= '2025-11-25';
  }

  #bind(stream: OutStream, conn: SseConnection): SseConnection {
    // Closed already (cut, or its client left during a replay): its 'close' has come and gone, so it
    // would be counted open for ever (and the session never go idle).
    if (!conn.open) return conn;
    stream.conn = conn;
    this.#o.onStreamsChanged(1);
    // Declared, then stored: a function literal written straight into a property is allocated old (see Peer.request).
    const closed = () => {
      this.#o.onStreamsChanged(-1);
      if (stream.conn === conn) stream.conn = undefined;
    };
    conn.onclose = closed;
    return conn;
  }

  /** A POST that carried requests: its answers go back on this response, as SSE or as one JSON body. */
  openPost(ids: RequestId[], res: ServerResponse, headers: Record<string, string>, mode: ResponseMode, batch: boolean): void {
    const stream = outStream(this, this.#nextNo++, ids);
    for (const id of ids) this.#byRequest.set(id, stream);
    this.#streams.set(stream.no, stream);
    if (mode === 'sse') {
      this.#stream(stream, res, headers, false);
      return;
    }
    // Auto: JSON if every answer is in before anything needs a stream (progress, a request to the
    // client, a log line) and within the hold; the headers are not sent yet, so a stream is still open.
    const held = mode === 'auto';
    stream.json = { res, headers, batch, out: [], held };
    if (held) this.#o.hub.holds.hold(stream);
    res.on('close', () => {
      if (stream.json && !res.writableEnded) this.#retire(stream); // the client gave up: no one to answer
    });
  }

  /** The POST's answer as an SSE stream (opening with the priming event where the client takes one). */
  #stream(stream: OutStream, res: ServerResponse, headers: Record<string, string>, flush: boolean): SseConnection {
    const conn = this.#bind(stream, this.#o.hub.open(res, headers, flush));
    if (this.#priming()) conn.preface(ssePriming(`${stream.no}_0`, this.#o.retryMs));
    return conn;
  }

  /** AnswerHolds: the answer's hold ran out before it was complete, or an answered stream's grace did. */
  holdExpired(held: Held): void {
    const stream = held as OutStream;
    if (stream.final !== undefined) this.#retire(stream);
    else this.#toStream(stream, true);
  }

  /**
   * An auto-mode answer that must stream after all: what it held goes out first, as events (logged for
   * resumption like any other). `flush`: the hold ended, the client has waited long enough for headers.
   */
  #toStream(stream: OutStream, flush: boolean): void {
    const json = stream.json;
    if (!json?.held || this.#closed) return;
    stream.json = undefined;
    this.#o.hub.holds.release(stream);
    if (json.res.writableEnded || json.res.destroyed) {
      this.#retire(stream);
      return;
    }
    this.#stream(stream, json.res, json.headers, flush);
    for (const m of json.out) this.#event(stream, m);
  }

  /** GET without Last-Event-ID: the standalone stream for messages that relate to no request; `endsAt`: its token's expiry (see SseConnection). */
  async openStandalone(res: ServerResponse, headers: Record<string, string>, endsAt?: number): Promise<void> {
    const stream = this.#streams.get(0)!;
    if (stream.conn?.open || this.#opening?.open) throw new StreamConflictError('a standalone stream is already open for this session');
    const conn = (this.#opening = this.#open(stream, res, headers, `0_${stream.delivered}`, endsAt));
    try {
      await this.#catchUp(stream, conn, stream.delivered);
    } finally {
      if (this.#opening === conn) this.#opening = undefined;
    }
  }

  /** A GET's connection (to `stream` while held), primed with where it starts: a reader dropped before its next event resumes there,
   * not from nothing (the SDK's client then opened the GET stream; primed, it polls a stream for as long as its answer may come).
   * On the GET stream, what its socket takes counts as delivered. */
  #open(stream: OutStream | undefined, res: ServerResponse, headers: Record<string, string>, primeId: string, endsAt?: number): SseConnection {
    const conn = this.#o.hub.open(res, headers, true, endsAt);
    if (this.#priming()) conn.write(ssePriming(primeId, this.#o.retryMs));
    if (stream?.no !== 0) return conn;
    // Declared, then stored (see #bind). Events are numbered in order, so a later mark is a later event.
    const sent = (seq: number) => {
      if (seq > stream.delivered) stream.delivered = seq;
    };
    conn.onsent = sent;
    return conn;
  }

  /**
   * Writes what the log holds after `after`, again until nothing new arrived during the (possibly
   * remote) read, then binds the connection so that what follows goes out live, in order. False when
   * the connection closed on the way (its client left, or it was cut, or it could not catch up and was
   * ended): nothing is bound and nothing counts as delivered, so the log still serves the next attempt.
   */
  async #catchUp(stream: OutStream, conn: SseConnection, after: number): Promise<boolean> {
    // A newer connection takes over before the replay, not after it: left bound during the (awaited)
    // replay, the old one, which its client has given up on, took what arrived meanwhile live, and a
    // POST stream's last answer went out on it alone, unlogged, and retired the stream: the resuming
    // reader never got it. Unbound, everything that arrives is logged and the replay below picks it up.
    if (stream.conn?.open) stream.conn.end();
    let last = after;
    // Every event up to `covered` was sent, or is not in the log (evicted by its bounds, or lost by its store).
    let covered = after;
    for (let round = 0; this.#o.resumable && covered < stream.seq; round++) {
      if (round === CATCH_UP_ROUNDS) {
        // Still behind after every round: the stream grows faster than its log is read. Bound now, the
        // events logged since the last read would never reach this reader (they went to the log, not
        // to it). Ended instead, its client resumes from the last event it got, and nothing is lost.
        conn.end();
        return false;
      }
      const appended = stream.seq; // all logged before the read below: what it does not return is not in the log
      const events = (await this.#o.events.replay(this.#o.sessionId, stream.no, last)) ?? [];
      if (!(await this.#replay(conn, stream.no, events))) return false;
      last = events.at(-1)?.seq ?? last;
      covered = Math.max(appended, last);
    }
    if (!conn.open) return false;
    if (this.#closed) {
      // The session closed while the log was read: close() ended only the connections already bound.
      conn.end();
      return false;
    }
    if (stream.conn?.open) stream.conn.end(); // another resume of it that finished its replay first: the later one takes over
    this.#bind(stream, conn);
    return true;
  }

  /**
   * The log's events written to a resuming reader (see replayLog), listed meanwhile so that the session's close
   * ends it. Closed while its log was read: what was read goes out unwaited (the buffer bound cuts a reader that does not read).
   */
  async #replay(conn: SseConnection, no: number, events: ReadonlyArray<{ seq: number; data: string }>): Promise<boolean> {
    if (this.#closed) return replayLog(conn, no, events, Infinity);
    this.#replaying.add(conn);
    return replayLog(conn, no, events, this.#o.hub.maxBufferBytes / 2).finally(() => this.#replaying.delete(conn));
  }

  /** GET with Last-Event-ID: replay what came after it on that stream, then continue it live (until `endsAt`, as openStandalone's). */
  async resume(lastEventId: string, res: ServerResponse, headers: Record<string, string>, endsAt?: number): Promise<void> {
    const m = /^(\d+)_(\d+)$/.exec(lastEventId);
    if (!m) throw new UnknownEventIdError(`malformed Last-Event-ID "${clipped(lastEventId, 64)}"`);
    const [no, seq] = [Number(m[1]), Number(m[2])];
    const stream = this.#streams.get(no);
    if (stream?.final !== undefined) return this.#resumeAnswered(stream, seq, res, headers);
    if (!stream) {
      // Not held here (taken over; its request may have died with the old owner): the log's rest, the end, unprimed (see #open).
      const events = await this.#o.events.replay(this.#o.sessionId, no, seq);
      if (!events) throw new UnknownEventIdError(`Last-Event-ID "${clipped(lastEventId, 64)}" names no stream of this session`);
      const conn = this.#resumes.take(no, this.#o.hub.open(res, headers), res);
      if (await this.#replay(conn, no, events)) conn.end();
      return;
    }
    // A POST answered (or, in auto mode, still held) as one JSON body has no events: a stream bound to it
    // would never be ended, since its JSON answer retires it without a word to the stream.
    if (stream.json) throw new UnknownEventIdError(`Last-Event-ID "${clipped(lastEventId, 64)}" names a request answered as JSON, which has no events`);
    // The client has what it names: a later GET without Last-Event-ID need not send it again.
    if (no === 0 && seq <= stream.seq && seq > stream.delivered) stream.delivered = seq;
    const conn = this.#resumes.take(no, this.#open(stream, res, headers, `${no}_${seq}`, endsAt), res);
    // Cut or left on the way: the stream and its log stay for the client's next attempt.
    if (!(await this.#catchUp(stream, conn, seq))) return;
    if (no !== 0 && stream.pending.size === 0) {
      // Its answers were produced while the reader was away and are now delivered: the stream is done.
      conn.end();
      this.#retire(stream);
    }
  }

  async send(message: JsonRpcMessage, options?: SendOptions): Promise<void> {
    if (this.#closed) return;
    let stream: OutStream | undefined;
    if (isResponse(message)) {
      stream = message.id === null ? undefined : this.#byRequest.get(message.id);
      if (!stream) return; // abandoned, or its POST is gone: nobody can receive it
    } else {
      const related = options?.relatedRequestId === undefined ? undefined : this.#byRequest.get(options.relatedRequestId);
      // A message about a request held in auto mode: its answer becomes a stream, this message on it.
      if (related?.json?.held) this.#toStream(related, false);
      stream = related && !related.json ? related : this.#streams.get(0)!;
    }
    const live = stream.json ? (stream.json.out.push(message), false) : this.#event(stream, message);
    if (isResponse(message) && message.id !== null) this.#answered(stream, message.id, live);
  }

  /** Writes one message as an event of `stream` (logged for resumption); true when a live reader got it. */
  #event(stream: OutStream, message: JsonRpcMessage): boolean {
    const seq = ++stream.seq;
    const data = JSON.stringify(message);
    const text = this.#o.resumable ? sseEvent(data, `${stream.no}_${seq}`) : sseEvent(data);
    const conn = stream.conn?.open ? stream.conn : undefined;
    // The last answer of a POST stream goes out with the end of the response, in one write.
    const last = conn !== undefined && isResponse(message) && stream.pending.size === 1 && message.id !== null && stream.pending.has(message.id);
    // Logged for resumption, except that last answer to a live reader: kept on the stream (#keepAnswered),
    // since logging it cost an append and a drop per call (with Redis, a MULTI and a DEL).
    if (this.#o.resumable) {
      if (last) {
        stream.final = data;
        this.#finalBytes += data.length;
      } else {
        this.#o.events.append(this.#o.sessionId, stream.no, seq, data);
        stream.logged = true;
      }
    }
    if (!conn) return false;
    if (!last) return conn.write(text, seq);
    conn.end(text);
    return true;
  }

  /** A cancelled request: its POST no longer waits for its answer (the response can end without it). */
  release(id: RequestId): void {
    const stream = this.#byRequest.get(id);
    if (stream) this.#answered(stream, id, stream.conn?.open ?? false);
  }

  /** `live`: the answer reached a connected reader (so the stream needs no resumption). */
  #answered(stream: OutStream, id: RequestId, live: boolean): void {
    this.#byRequest.delete(id);
    stream.pending.delete(id);
    if (stream.pending.size > 0) return;
    if (stream.json) {
      const { res, headers, batch, out, held } = stream.json;
      stream.json = undefined;
      if (held) this.#o.hub.holds.release(stream);
      if (!res.writableEnded && !res.destroyed) {
        if (out.length === 0) res.writeHead(202, headers).end();
        else endJson(res, 200, headers, JSON.stringify(batch ? out : out[0]));
      }
      this.#retire(stream);
      return;
    }
    if (live || stream.conn?.open || !this.#o.resumable) {
      stream.conn?.end();
      if (stream.final !== undefined && this.#o.hub.answered) this.#keepAnswered(stream, this.#o.hub.answered);
      else this.#retire(stream); // never resumable, or a cancelled request's stream: no longer needed
      return;
    }
    // The reader dropped: keep the stream's events for a resuming GET, up to a bound.
    this.#done.push(stream.no);
    while (this.#done.length > STREAMS_KEPT_PER_SESSION) {
      const old = this.#streams.get(this.#done.shift()!);
      if (old) this.#retire(old);
    }
  }

  /**
   * Written to a live reader is only handed to the kernel, or a proxy: a client whose network dropped
   * resumes with the last id it got and must get the answer. The stream (its log, its last answer, not its
   * connection) stays for the hub's grace, dropped by its coarse timer; at most STREAMS_KEPT_PER_SESSION,
   * and answers of at most the hub's answeredBytesPerSession: past either the oldest go first (one larger
   * than the bytes alone is not kept), as evicted. Bounded by count alone, 64 answers of up to 8 MiB each were kept a session.
   */
  #keepAnswered(stream: OutStream, grace: AnswerHolds): void {
    stream.conn = undefined;
    grace.hold(stream);
    this.#graced.push(stream.no);
    const hub = this.#o.hub;
    while (this.#graced.length > 0 && (this.#graced.length > STREAMS_KEPT_PER_SESSION || this.#finalBytes > hub.answeredBytesPerSession)) {
      const old = this.#streams.get(this.#graced.shift()!);
      if (old?.final === undefined) continue;
      this.#retire(old);
      hub.answersEvicted++;
    }
  }

  /** A resume of a stream answered live, within its grace: what the log has after `seq`, its last answer, the end. */
  async #resumeAnswered(stream: OutStream, seq: number, res: ServerResponse, headers: Record<string, string>): Promise<void> {
    const final = stream.final!; // the stream may be let go during the replay below
    const conn = this.#resumes.take(stream.no, this.#open(undefined, res, headers, `${stream.no}_${seq}`), res);
    const logged = stream.logged && seq < stream.seq - 1 ? await this.#o.events.replay(this.#o.sessionId, stream.no, seq) : undefined;
    if (!(await this.#replay(conn, stream.no, logged ?? []))) return;
    conn.end(seq < stream.seq ? sseEvent(final, `${stream.no}_${stream.seq}`) : undefined);
  }

  #retire(stream: OutStream): void {
    if (stream.json?.held) this.#o.hub.holds.release(stream);
    if (stream.final !== undefined) {
      this.#o.hub.answered?.release(stream);
      this.#finalBytes -= stream.final.length;
      stream.final = undefined;
    }
    for (const id of stream.pending) this.#byRequest.delete(id);
    this.#streams.delete(stream.no);
    if (stream.logged) this.#o.events.dropStream(this.#o.sessionId, stream.no);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const s of this.#streams.values()) {
      s.conn?.end();
      if (s.json?.held) this.#o.hub.holds.release(s);
      if (s.final !== undefined) this.#o.hub.answered?.release(s);
      if (s.json && !s.json.res.writableEnded) s.json.res.writeHead(404).end();
    }
    // A replay waiting for a reader that does not read: left, it held the ended session's log and connection.
    for (const conn of this.#replaying) conn.abort();
    this.#replaying.clear();
    this.#streams.clear();
    this.#byRequest.clear();
  }
}
