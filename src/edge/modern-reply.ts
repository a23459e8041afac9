import type { ServerResponse } from 'node:http';
import type { JsonRpcMessage, JsonRpcResponse, RequestId } from '../jsonrpc/types.js';
import type { AttemptOwner, AttemptSink } from '../modern/exchange.js';
import type { ModernCall } from '../modern/modern-request.js';
import { sseEvent } from '../jsonrpc/sse.js';
import type { Held, HoldOwner } from './answer-holds.js';
import type { SseConnection, SseHub } from './sse-connection.js';
import { endJson } from './replies.js';
import { modernResponseBody } from '../modern/result-shape.js';

const NO_HEADERS: Record<string, string> = {};
/** A 503 (the store away, shutting down) is a passing state: it says when to try again, as the session era's do. */
const RETRY_SOON: Record<string, string> = { 'retry-after': '5' };

/**
 * The answer to one 2026-07-28 POST. It stays undecided until something must be said: the final
 * response alone goes out as one JSON body (with the HTTP status the spec gives its error), while a
 * notification that comes first (progress, a log line the request asked for) turns it into an SSE
 * stream scoped to the request. Closing it is the client's cancellation.
 */
export class ModernReply implements AttemptSink, Held, HoldOwner {
  readonly id: RequestId;
  /** Its own holder in the hub's answer holds (see holdForRelay; a hold needs no closure). */
  readonly holder: HoldOwner = this;
  holdTicket = 0;
  holdSlot = 0;
  readonly call: ModernCall;
  readonly #res: ServerResponse;
  readonly #hub: SseHub;
  #sse: SseConnection | undefined;
  #done = false;
  /**
   * Told if the client goes first: the exchange itself, not a closure calling it. V8's parser allocates
   * a function literal written straight into a property (`reply.onclose = () => …`) in the old
   * generation; dead there, it kept its request alive through every young-generation GC until a major
   * one, and a 2026-07-28 gateway promoted whole requests (Node 24: ~1.8 MB per scavenge against a JSON
   * session gateway's ~0.45 MB; README "Performance").
   */
  owner: AttemptOwner | undefined;

  constructor(res: ServerResponse, hub: SseHub, call: ModernCall) {
    this.id = call.id;
    this.call = call;
    this.#res = res;
    this.#hub = hub;
    // 'close' comes once per response: `on` spares the wrapper `once` allocates per request.
    res.on('close', () => {
      this.#hub.holds.release(this);
      if (!this.#done) this.owner?.detach(this);
    });
  }

  /**
   * For a request another replica relays (a retry whose continuation this replica holds): an answer not
   * complete within the hub's hold becomes an SSE stream, its headers out at once and keep-alives after,
   * as `responseMode: auto` does. The relaying replica waits for headers only `forwardTimeoutMs`; a call
   * that runs longer after its input round would otherwise be given up there (503, the used request
   * state then refused) while it still runs here. A quick answer stays one JSON body, with its status.
   */
  holdForRelay(): void {
    if (!this.#done && !this.#sse) this.#hub.holds.hold(this);
  }

  /** AnswerHolds: the hold ran out before the answer was complete. */
  holdExpired(): void {
    if (!this.open || this.#sse) return;
    this.#sse = this.#hub.open(this.#res, {}, true);
  }

  /** False once the answer is out or the client has gone. */
  get open(): boolean {
    return !this.#done && !this.#res.destroyed;
  }

  notify(message: JsonRpcMessage): void {
    if (!this.open) return;
    this.#hub.holds.release(this);
    this.#sse ??= this.#hub.open(this.#res, {}, false);
    this.#sse.write(sseEvent(JSON.stringify(message)));
  }

  /** The final response; `status` applies only when it is the whole answer (no stream began). */
  finish(response: JsonRpcResponse, status = 200): void {
    this.#hub.holds.release(this);
    if (!this.open) return;
    this.#done = true;
    const body = modernResponseBody(response);
    if (this.#sse) {
      this.#sse.end(sseEvent(body.text));
      return;
    }
    endJson(this.#res, status, status === 503 || status === 429 ? retryAfter(response, status) : NO_HEADERS, body.text, body.bytes);
  }
}

/**
 * A refusal's Retry-After: the seconds its error names (data.retryAfterSeconds: an upstream's Retry-After that
 * SWB_UPSTREAM_THROTTLED passes on, a limit's wait), as the rate limiter's 429 says them; else a 503's short wait.
 * Before, a 503 said 5 s whatever the upstream had asked for.
 */
function retryAfter(response: JsonRpcResponse, status: number): Record<string, string> {
  const seconds = 'error' in response ? (response.error.data as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds : undefined;
  if (typeof seconds === 'number') return { 'retry-after': String(seconds) };
  return status === 503 ? RETRY_SOON : NO_HEADERS;
}
