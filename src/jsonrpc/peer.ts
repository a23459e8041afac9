import { randomInt } from 'node:crypto';
import { Cancellation } from './cancellation.js';
import { JsonRpcError } from './json-rpc-error.js';
import { isFailure, type JsonRpcErrorObject, type JsonRpcMessage, type JsonRpcRequest, type JsonRpcResponse, type RequestId } from './types.js';
import { RequestTable } from './request-table.js';

/** How much of the other side's cancel reason is kept (it is passed on). */
const MAX_REASON = 512;

type Params = Record<string, unknown> | undefined;
type Result = Record<string, unknown>;

/** What one outgoing request asks of the peer. Owners extend it with what they need to find again by id. */
export interface OutgoingOptions {
  /** How long to wait for the answer; each progress notification starts it again. */
  timeoutMs: number;
  /** The bound on the whole wait, however much progress arrives; timeoutMs when absent. */
  maxTimeoutMs?: number | undefined;
  signal?: Cancellation | undefined;
  /** Send option for the request and its cancel notice (Streamable HTTP: the stream they travel on). */
  relatedRequestId?: RequestId | undefined;
  /** Each progress notification's params, with the caller's own token put back. */
  onProgress?: ((params: Record<string, unknown>) => void) | undefined;
  /** The other side is working on the request and says so (a progress notification, a question asked for it: see pause). */
  onAnswering?: (() => void) | undefined;
  /** Where the answer's size on the wire is written, when the transport told it (the audit log's figure). */
  receipt?: { resultBytes?: number | undefined } | undefined;
  /** What the request holds (a concurrency slot) that outlives its cancellation: see Linger. */
  linger?: Linger | undefined;
}

/**
 * What a request holds on its owner's side beyond its caller's wait. A cancellation is advisory in MCP: the
 * other side may run the request on, and one that stops says nothing. So a request cancelled once sent is
 * held (hold(), then nothing of the caller's) until the other side answers it after all, the link closes or
 * `ms` pass, whichever comes first (release(), once). One per owner, never per request (none: 0 ms).
 */
export interface Linger {
  readonly ms: number;
  hold(): void;
  release(): void;
}

/** The link a peer talks over, and how its failures read in its owner's terms. */
export interface PeerLink<O extends OutgoingOptions = OutgoingOptions> {
  send(message: JsonRpcMessage, relatedRequestId: RequestId | undefined): Promise<void>;
  timeoutError(method: string, timeoutMs: number): Error;
  cancelledError(reason: unknown): Error;
  /** A request that could not be written fails with this (the send error itself when absent). */
  sendError?(err: Error): Error;
  /** Answers larger than this on the wire (errors too: they reach the caller as much) fail their request. */
  maxResultBytes?: number | undefined;
  tooLargeError?(bytes: number, limit: number, isError: boolean): Error;
  /** An error answer as its request fails (JsonRpcError.from when absent): read with the request's options. */
  remoteError?(error: JsonRpcErrorObject, opts: O): Error;
  /** The reasons a notifications/cancelled gives: after a timeout, and for a cancel without a reason. */
  timeoutReason: string;
  cancelReason: string;
}

interface Outgoing<O extends OutgoingOptions> {
  readonly id: number;
  readonly method: string;
  readonly opts: O;
  readonly resolve: (result: Result) => void;
  readonly reject: (err: Error) => void;
  readonly deadline: number;
  /** The caller's progress token, replaced on the wire by the request's own id. */
  readonly token: string | number | undefined;
  /** When it times out (epoch ms): progress moves it on, never past the deadline. */
  due: number;
  /** Pauses not yet resumed (see pause): while any is open, only the deadline holds. */
  paused: number;
  /** Registered on opts.signal; kept to remove it again once the request is settled. */
  abort: (() => void) | undefined;
}

const NOTHING = () => {};
/** The longest delay setTimeout takes (2^31 - 1 ms, about 24.8 days): Node fires a longer one after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A first request id drawn at random, for a peer facing a client session: a session taken over by another
 * replica gets a new peer, and a client still answering the previous owner's question (a confirmation
 * asked as id 1) must not answer the new owner's request of the same id.
 */
export function randomFirstId(): number {
  return randomInt(1, 2 ** 47);
}

/**
 * One side of a JSON-RPC link, as the MCP SDK's Protocol is: ids from its own counter, a timeout per
 * request that progress resets up to a maximum, notifications/cancelled when it gives up or its caller
 * does, and clean-up of all of it when the link closes. Both directions of the gateway use it: requests
 * to an upstream, and the requests upstreams put to a client session. It owns no transport: its owner
 * hands it what arrives (responses, progress, cancellations) and gives it a way to send.
 *
 * Hot path: per request it allocates the promise, one record, and one closure only when a signal is given.
 * The timeouts share one timer per peer, set for the earliest that may be due: a request whose time is
 * later than it (nearly all: one timeout for every request on a link) costs no timer at all, where a
 * setTimeout and clearTimeout each (a Timeout, its list, calls into the runtime) were a measurable part
 * of a proxied call. When the timer fires early for requests long answered, it looks again.
 */
export class JsonRpcPeer<O extends OutgoingOptions = OutgoingOptions> {
  readonly #link: PeerLink<O>;
  readonly #outgoing = new RequestTable<Outgoing<O>>();
  /** Requests the other side sent us, by its id, so its notifications/cancelled can stop them. */
  readonly #incoming = new RequestTable<Cancellation>();
  /** Requests cancelled once sent whose Linger still holds, by id, with the timer that ends the hold. */
  readonly #lingering = new RequestTable<{ linger: Linger; timer: NodeJS.Timeout }>();
  #nextId = 1;
  readonly #firstId: number;
  #closedError: Error | undefined;
  /** The one timer for every request's timeout, and when it fires (Infinity: none set). */
  #timer: NodeJS.Timeout | undefined;
  #timerDue = Number.POSITIVE_INFINITY;

  /** `firstId`: the id of its first request (a session restored on another replica must not reuse the ids its client saw). */
  constructor(link: PeerLink<O>, firstId = 1) {
    this.#link = link;
    this.#nextId = firstId;
    this.#firstId = firstId;
  }

  /** An id this peer sent a request with, answered or not: an answer to any other is to nothing it asked. */
  sent(id: RequestId): boolean {
    return typeof id === 'number' && Number.isInteger(id) && id >= this.#firstId && id < this.#nextId;
  }

  /** Outgoing requests still waiting for their answer. */
  get inflight(): number {
    return this.#outgoing.size;
  }

  /** Incoming requests accepted and not yet finished (answered or dropped). */
  get accepted(): number {
    return this.#incoming.size;
  }

  /** An incoming request of this id is accepted and not finished: another of the same id is not the same request. */
  accepting(id: RequestId): boolean {
    return this.#incoming.has(id);
  }

  /** Why the link closed, once it has: later requests fail with it. */
  get closedError(): Error | undefined {
    return this.#closedError;
  }

  /** The options an outgoing request in flight was sent with; undefined for any id not in flight. */
  options(id: RequestId | undefined): O | undefined {
    return typeof id === 'number' ? this.#outgoing.get(id)?.opts : undefined;
  }

  /** The method of an outgoing request in flight; undefined for any id not in flight. */
  methodOf(id: RequestId | undefined): string | undefined {
    return typeof id === 'number' ? this.#outgoing.get(id)?.method : undefined;
  }

  /** The options of every outgoing request in flight, oldest first. */
  *inflightOptions(): Generator<O> {
    for (const p of this.#outgoing.values()) yield p.opts;
  }

  request(method: string, params: Params, opts: O): Promise<Result> {
    if (this.#closedError) return Promise.reject(this.#closedError);
    if (opts.signal?.aborted) return Promise.reject(this.#link.cancelledError(opts.signal.reason));
    const id = this.#nextId++;
    const meta = params?._meta as Record<string, unknown> | undefined;
    const token = meta?.progressToken as string | number | undefined;
    // Every caller on this link shares its token space: the request's own id is its token on the wire.
    const out = token === undefined ? params : { ...params, _meta: { ...meta, progressToken: id } };
    const message: JsonRpcRequest = out === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params: out };
    return new Promise<Result>((resolve, reject) => {
      const deadline = Date.now() + (opts.maxTimeoutMs ?? opts.timeoutMs);
      const p: Outgoing<O> = { id, method, opts, resolve, reject, deadline, token, due: deadline, paused: 0, abort: undefined };
      this.#outgoing.set(id, p);
      // Held loosely while nothing is in flight (see #settle): in flight, it keeps the process up.
      if (this.#outgoing.size === 1) this.#timer?.ref();
      this.#arm(p);
      if (opts.signal) {
        // Declared, then stored: V8's parser allocates a function literal written straight into a
        // property (`p.abort = () => …`) in the old generation, which kept every request it reached
        // alive through young-generation GCs (see ModernReply.owner).
        const abort = () => this.#cancel(p);
        p.abort = abort;
        opts.signal.onAbort(abort);
      }
      this.#link.send(message, opts.relatedRequestId).catch((err: Error) => {
        if (this.#settle(p)) reject(this.#link.sendError ? this.#link.sendError(err) : err);
      });
    });
  }

  /** An answer from the other side. False when nothing in flight has its id (late after a cancel or timeout, or never ours). */
  response(m: JsonRpcResponse, bytes?: number): boolean {
    const p = typeof m.id === 'number' ? this.#outgoing.get(m.id) : undefined;
    if (!p || !this.#settle(p)) return this.#letGo(m.id);
    const max = this.#link.maxResultBytes;
    if (max !== undefined && bytes !== undefined && bytes > max && this.#link.tooLargeError) {
      p.reject(this.#link.tooLargeError(bytes, max, isFailure(m)));
    } else if (isFailure(m)) {
      p.reject(this.#link.remoteError ? this.#link.remoteError(m.error, p.opts) : JsonRpcError.from(m.error));
    } else {
      if (bytes !== undefined && p.opts.receipt) p.opts.receipt.resultBytes = bytes;
      p.resolve(m.result);
    }
    return true;
  }

  /** An answer that came but could not be read (too large for the link): its request fails with `err`. Nothing is cancelled: it was answered. */
  fail(id: RequestId, err: Error): boolean {
    const p = typeof id === 'number' ? this.#outgoing.get(id) : undefined;
    if (!p || !this.#settle(p)) return this.#letGo(id);
    p.reject(err);
    return true;
  }

  /**
   * notifications/progress: restarts its request's timer (the maximum still holds) and tells the caller. A
   * paused request's timer stays stopped: restarted, the short timeout would run while the person answers.
   */
  progress(params: Params): void {
    const token = params?.progressToken;
    const p = typeof token === 'number' ? this.#outgoing.get(token) : undefined;
    // A request sent without a token asked for no progress: whatever claims to be its progress is dropped.
    if (!p || p.token === undefined) return;
    if (p.paused === 0) this.#arm(p);
    p.opts.onAnswering?.();
    p.opts.onProgress?.({ ...params, progressToken: p.token });
  }

  /**
   * The other side is waiting on an answer we relay for it (an upstream asked its client something):
   * the matching requests' timeouts stop counting — a person may take minutes to answer — and only their
   * maximum still holds. Each is told the other side is answering it. The returned function ends this
   * pause (once, however often called); a request's timeout starts again when its last pause ends, not
   * while another question is open (a quick roots/list answered while the user still reads an elicitation).
   */
  pause(match: (opts: O) => boolean): () => void {
    const paused: Array<Outgoing<O>> = [];
    for (const p of this.#outgoing.values()) {
      if (!match(p.opts)) continue;
      // Later than before: the timer, set for the earliest, needs no change.
      p.due = p.deadline;
      p.paused++;
      paused.push(p);
    }
    for (const p of paused) p.opts.onAnswering?.();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      for (const p of paused) if (this.#outgoing.get(p.id) === p && --p.paused === 0) this.#arm(p);
    };
  }

  /** A request the other side sent us: its cancellation, fired by its notifications/cancelled or the link's end. */
  accept(id: RequestId): Cancellation {
    const c = new Cancellation();
    this.#incoming.set(id, c);
    return c;
  }

  /** The accepted request is finished (answered or dropped). */
  done(id: RequestId, c: Cancellation): void {
    if (this.#incoming.get(id) === c) this.#incoming.delete(id);
  }

  /**
   * notifications/cancelled from the other side; `fallback` is the reason when it gave none, or none that is
   * a string. Its reason is passed on (to the client an upstream's request was relayed to, in a log line), so
   * it is cut: before 2026-12-07 an object became "[object Object]" there, and a line's length was kept.
   */
  cancelled(params: Params, fallback: string): void {
    const id = params?.requestId as RequestId | undefined;
    if (id === undefined) return;
    const reason = params?.reason;
    this.#incoming.get(id)?.abort(typeof reason !== 'string' ? fallback : reason.length > MAX_REASON ? `${reason.slice(0, MAX_REASON)}…` : reason);
  }

  /** The link is gone: every outgoing request fails with `err` (and so does every later one), every accepted one is cancelled. */
  close(err: Error, reason: string): void {
    this.#closedError ??= err;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerDue = Number.POSITIVE_INFINITY;
    for (const p of [...this.#outgoing.values()]) if (this.#settle(p)) p.reject(err);
    // Gone with the link: what it was running there is over (a stdio child's end), or can no longer be answered.
    for (const [id] of [...this.#lingering.entries()]) this.#letGo(id);
    for (const c of this.#incoming.values()) c.abort(reason);
    this.#incoming.clear();
  }

  #arm(p: Outgoing<O>): void {
    const now = Date.now();
    p.due = now + Math.max(0, Math.min(p.opts.timeoutMs, p.deadline - now));
    if (p.due < this.#timerDue) this.#schedule(p.due, now);
  }

  #schedule(due: number, now: number): void {
    clearTimeout(this.#timer);
    this.#timerDue = due;
    // Node fires a longer delay at once (with a warning): such a timer wakes at the limit and looks again.
    this.#timer = setTimeout(this.#sweep, Math.min(MAX_TIMER_MS, Math.max(0, due - now)));
  }

  /** The timer fired: every request due by now times out, and the timer is set for the next one due. */
  readonly #sweep = (): void => {
    this.#timer = undefined;
    this.#timerDue = Number.POSITIVE_INFINITY;
    const now = Date.now();
    let expired: Array<Outgoing<O>> | undefined;
    let next = Number.POSITIVE_INFINITY;
    for (const p of this.#outgoing.values()) {
      if (p.due <= now) (expired ??= []).push(p);
      else if (p.due < next) next = p.due;
    }
    if (expired) for (const p of expired) this.#expire(p);
    // Expiring may have sent requests, which set the timer for theirs if earlier.
    if (next < this.#timerDue) this.#schedule(next, now);
  };

  #expire(p: Outgoing<O>): void {
    if (!this.#settle(p)) return;
    // initialize is never cancelled (the spec forbids it); its owner gives up the link instead.
    if (p.method !== 'initialize') {
      this.#notifyCancelled(p, this.#link.timeoutReason);
      // A request that timed out is the likeliest to be running on still: held as a cancelled one is.
      const linger = p.opts.linger;
      if (linger && linger.ms > 0) this.#hold(p.id, linger);
    }
    p.reject(this.#link.timeoutError(p.method, p.opts.timeoutMs));
  }

  #cancel(p: Outgoing<O>): void {
    if (!this.#settle(p)) return;
    const reason = p.opts.signal?.reason;
    this.#notifyCancelled(p, String(reason ?? this.#link.cancelReason));
    const linger = p.opts.linger;
    if (linger && linger.ms > 0) this.#hold(p.id, linger);
    p.reject(this.#link.cancelledError(reason));
  }

  /** A cancelled request's hold begins: it ends at its late answer, the link's close, or after linger.ms. */
  #hold(id: number, linger: Linger): void {
    linger.hold();
    const timer = setTimeout(() => this.#letGo(id), linger.ms);
    timer.unref(); // a hold never keeps the process up
    this.#lingering.set(id, { linger, timer });
  }

  /** The hold of cancelled request `id`, if it has one, ends. False: nothing in flight had this id (see response). */
  #letGo(id: RequestId | null): false {
    const held = typeof id === 'number' ? this.#lingering.get(id) : undefined;
    if (!held) return false;
    this.#lingering.delete(id as number);
    clearTimeout(held.timer);
    held.linger.release();
    return false;
  }

  /** Removes a request in flight and what waits on its behalf; false when it was settled already. */
  #settle(p: Outgoing<O>): boolean {
    if (this.#outgoing.get(p.id) !== p) return false;
    this.#outgoing.delete(p.id);
    // Nothing in flight: the timer may stay set, but must not keep the process up by itself.
    if (this.#outgoing.size === 0) this.#timer?.unref();
    if (p.abort) p.opts.signal?.offAbort(p.abort);
    return true;
  }

  #notifyCancelled(p: Outgoing<O>, reason: string): void {
    this.#link.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: p.id, reason } }, p.opts.relatedRequestId).catch(NOTHING);
  }
}
