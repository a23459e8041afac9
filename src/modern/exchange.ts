import type { Principal } from '../auth/principal.js';
import { Cancellation } from '../jsonrpc/cancellation.js';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import type { JsonRpcMessage, JsonRpcResponse } from '../jsonrpc/types.js';
import { refuseHeld, type HeldAsk as Ask } from './held-ask.js';
import { INPUT_KEY_HINT, capabilityRefusal, clientParams, notAnInputRequest, takenAnswer, urlElicitations, urlRefusal } from './input-requests.js';
import type { AttemptOwner, AttemptSink } from './attempt-sink.js';
import type { ModernCall } from './modern-request.js';
import { CacheLimit, completed } from './result-shape.js';

export type { AttemptOwner, AttemptSink } from './attempt-sink.js';

export interface ExchangeHooks {
  /** Seals the state a retry must echo for the rounds asked so far. */
  seal(exchange: Exchange): string;
  /** Shapes a complete result for a modern client (resultType, serverInfo, caching). */
  shape(call: ModernCall, response: JsonRpcResponse, retried: boolean, limit: CacheLimit | undefined): JsonRpcResponse;
  /**
   * The exchange is over: answered, or abandoned (no retry came within the continuation's lifetime, the
   * client left, a refusal), in which case the upstream call was stopped. Nothing continues it any more.
   */
  ended(exchange: Exchange, reason: string): void;
  /** Makes the upstream call again (after the URL-mode elicitations a -32042 asked for were completed). */
  rerun(exchange: Exchange): void;
  ttlMs: number;
}

const KEY = /^[A-Za-z0-9_.-]{1,64}$/;
const NOTHING_OFFERED: Map<string, Record<string, unknown>> = new Map();
/** Most calls ask nothing: they share this empty Map instead of one of their own (only #asking() adds). */
const NO_ASKS: Map<string, Ask> = new Map();

/** Why a confirmation question was given up when its time ran out. */
const CONFIRM_TIMEOUT = 'confirmation timeout';

/** A round goes out after this long without a new question from the upstream... */
const ROUND_QUIET_MS = 20;
/** ...and never later than this after its first one. */
const ROUND_MAX_MS = 200;

/**
 * One modern request on its way through a 2025 upstream, across its multi round-trip rounds. The
 * gateway keeps its own 2025 call to the upstream open; each server→client request the upstream sends
 * during it becomes an entry of an input_required result, and the retry's inputResponses are the
 * upstream's answers. The first attempt and every retry are separate POSTs: the exchange outlives them.
 */
export class Exchange implements AttemptOwner {
  readonly #idPrefix: string;
  #id: string | undefined;
  /**
   * The request id the gateway's side of the call knows it by (its stages, its upstream call): a number, so
   * that the in-flight tables keep it in their number table; a string key per request would be internalized
   * (V8's string table, in the old generation) and churn the dictionary that holds it.
   */
  readonly seq: number;
  readonly first: ModernCall;
  /** Whose request it is: its token's scopes judge it, in every round (see ModernSession.guardFor). */
  readonly principal: Principal;
  readonly cancel = new Cancellation();
  readonly #hooks: ExchangeHooks;
  #asks = NO_ASKS;
  /** Answers the latest attempt brought that no question has taken yet (a first call may bring some). */
  #offered = NOTHING_OFFERED;
  /** Keys used in this exchange: a later question never reuses one (a stale answer could match it). */
  #usedKeys: Set<string> | undefined;
  #nextKey = 1;
  #attempt: AttemptSink | undefined;
  /** A retry came, or an attempt brought inputResponses: the result is not to be cached (ttlMs 0). */
  #retried = false;
  /** The upstream refused the call until URLs were visited (-32042): once they are, it is made again. */
  #rerun = false;
  /** The user declined (or cancelled) one of those URLs: the call is not made again. */
  #urlRefused: string | undefined;
  /** The final response, once the upstream call is over and no attempt was waiting for it. */
  #final: JsonRpcResponse | undefined;
  #flush: NodeJS.Timeout | undefined;
  /** When the round being gathered saw its first question (the quiet window never stretches past ROUND_MAX_MS). */
  #roundStarted = 0;
  #expiry: NodeJS.Timeout | undefined;
  #over = false;
  /** The answer to the gateway's own confirmation question, once a retry gave it. */
  #confirmed: Record<string, unknown> | undefined;
  /** The id of the state sealed for the round now out, until a retry presents it: the only one accepted. */
  #roundState: string | undefined;
  /** What modern upstreams said of caching their answers to it; made on the first such answer (most calls have none). */
  #cache: CacheLimit | undefined;

  /** Kept by the service under its id, to be continued by a retry (once it sealed a state). */
  held = false;
  /** When the call began, while its upstream's -32042 awaits a URL round and has no audit line (see ModernSession.run). */
  unaudited: number | undefined;
  /** A tools/call's definition, once its route checked the Mcp-Param-* headers against it: each retry's are too. */
  toolDefinition: Record<string, unknown> | undefined;

  /** Told of each input_required round with its number of questions (the request's span records it). */
  onRound: ((asks: number) => void) | undefined;

  /** `idPrefix` and `seq` make the continuation id, which only a call that asks for input ever needs. */
  constructor(idPrefix: string, seq: number, first: ModernCall, principal: Principal, hooks: ExchangeHooks) {
    this.#idPrefix = idPrefix;
    this.seq = seq;
    this.first = first;
    this.principal = principal;
    this.#hooks = hooks;
  }

  /**
   * The continuation id (sealed in requestState): written when first asked for, since most calls never
   * seal a state (a string per request was a number's conversion and a concatenation per call).
   */
  get id(): string {
    return (this.#id ??= `${this.#idPrefix}${this.seq}`);
  }

  get over(): boolean {
    return this.#over;
  }

  /** Waiting for the client's retry: a round went out (or the answer is kept for one) and no attempt is here. */
  get waiting(): boolean {
    return !this.#over && this.#attempt === undefined;
  }

  /** The capabilities and log level of the attempt now waiting (declared per request, never inherited). */
  get current(): ModernCall | undefined {
    return this.#attempt?.call;
  }

  /** A 2026-07-28 upstream's ttlMs and cacheScope on its answer: the result a modern client gets claims no more. */
  narrowCache(ttlMs: unknown, cacheScope: unknown): void {
    (this.#cache ??= new CacheLimit()).narrow(ttlMs, cacheScope);
  }

  /** The state just sealed for the round going out: a retry continues this exchange only with it. */
  sealedState(stateId: string): void {
    this.#roundState = stateId;
  }

  /** Whether a retry with this state would continue the call now: its current round's, not yet presented. */
  awaits(stateId: string): boolean {
    return !this.#over && this.#roundState === stateId;
  }

  /** awaits(), and used up if so: single use where the call is held (every retry is handed there), no record outliving it. */
  takeState(stateId: string): boolean {
    if (!this.awaits(stateId)) return false;
    this.#roundState = undefined;
    return true;
  }

  /** An attempt arrived (the first POST, or a retry with inputResponses): it waits for the next thing to say. */
  attach(sink: AttemptSink, inputResponses: Record<string, unknown> | undefined): void {
    clearTimeout(this.#expiry);
    if (this.#attempt && this.#attempt !== sink) this.#attempt.finish(new JsonRpcError(ErrorCode.InvalidRequest, 'superseded by a later retry of the same request').toResponse(this.#attempt.id), 409);
    this.#attempt = sink;
    // Answers brought along (even on a first request) may make the result: no cache may give it to anyone else.
    if (sink.call !== this.first || inputResponses !== undefined) this.#retried = true;
    // Only objects can be answers (ElicitResult, CreateMessageResult, ListRootsResult); anything else is ignored and asked again.
    // (Most calls bring none and ask nothing: nothing is allocated for them.)
    this.#offered = inputResponses === undefined ? NOTHING_OFFERED : new Map(Object.entries(inputResponses).filter((e): e is [string, Record<string, unknown>] => e[1] !== null && typeof e[1] === 'object' && !Array.isArray(e[1])));
    // Keys the gateway did not ask are ignored; keys it asked and did not get are asked again below.
    if (this.#asks.size > 0) for (const [key, ask] of [...this.#asks]) {
      const answer = this.#offered.get(key);
      if (!answer) continue;
      this.#offered.delete(key);
      this.#asks.delete(key);
      ask.resolve(answer);
    }
    if (this.#final) return this.#deliver(this.#final);
    if (this.#asks.size > 0) {
      // Asked while no attempt was here: each request declares its own capabilities, and this one may declare fewer.
      const refusal = this.#unanswerable(sink.call);
      return refusal ? this.#fail(refusal.toResponse(sink.id), 400) : this.#scheduleRound();
    }
    if (this.#rerun) {
      this.#rerun = false;
      // A URL the user would not open: the upstream still refuses the call, so it is not made again.
      if (this.#urlRefused !== undefined) return this.#deliver(urlRefusal(this.#urlRefused, this.first.method));
      // Every URL the upstream named was visited: its call is made again.
      this.#hooks.rerun(this);
    }
  }

  /** The attempt's client closed its stream before the answer: that cancels the request. */
  detach(sink: AttemptSink): void {
    if (this.#attempt !== sink) return;
    this.#attempt = undefined;
    this.#end('the client closed the request');
  }

  /** The pipeline's answer: the upstream call is over. */
  settle(response: JsonRpcResponse | undefined): void {
    if (this.#over) return;
    if (!response) return this.#end('cancelled');
    // The upstream's call is over: a question of it still held (a round being gathered, or out) is refused now.
    refuseHeld(this.#asks, 'the upstream answered the call before this question was');
    if (urlElicitations(response) && this.first.spec.mrtr) return this.#urlRound(urlElicitations(response)!);
    if (this.#attempt) return this.#deliver(response);
    this.#final = response;
  }

  /**
   * A 2025 upstream's -32042 (the user must first visit these URLs, then the call may be made again)
   * becomes a round of URL-mode elicitations; once the retry answers them all, the call is made again.
   */
  #urlRound(list: Array<Record<string, unknown>>): void {
    // With no attempt here, the retry that comes is checked for URL mode when it arrives (#unanswerable).
    if (this.#attempt && !this.#attempt.call.capabilities.elicitation?.url) {
      const err = new JsonRpcError(ErrorCode.MissingRequiredClientCapability, 'Missing required client capability: the upstream needs URL-mode elicitation', { requiredCapabilities: { elicitation: { url: {} } } });
      return this.#fail(err.toResponse(this.#attempt.id), 400);
    }
    // Declared, then stored: a function literal written straight into a property is allocated old (see Peer.request).
    const answered = (answer: Record<string, unknown>) => {
      if (answer.action !== 'accept') this.#urlRefused ??= answer.action === 'cancel' ? 'cancelled' : 'declined';
    };
    for (const e of list) {
      const key = this.#newKey('elicitation', undefined);
      const params = { mode: 'url', message: String(e.message ?? 'Open this link to continue'), url: String(e.url ?? '') };
      this.#asking().set(key, { method: 'elicitation/create', params, resolve: answered, reject: () => {} });
    }
    this.#rerun = true;
    this.#scheduleRound();
  }

  /** A server→client request from the upstream during this call: it becomes an input request. */
  ask(method: string, params: Record<string, unknown> | undefined, signal: Cancellation): Promise<Record<string, unknown>> {
    // Only tools/call, prompts/get and resources/read may answer input_required; a list cannot ask.
    // Nor once the call is answered (#final): a question sent after its own answer would never leave.
    if (!this.first.spec.mrtr || this.#over || this.#final) return Promise.reject(new JsonRpcError(ErrorCode.MethodNotFound, `"${method}" cannot reach a 2026-07-28 client during ${this.first.method}`));
    const stray = notAnInputRequest(method);
    if (stray) return Promise.reject(stray);
    // Each request declares its own: with no attempt here, the retry that comes is checked when it arrives (#unanswerable).
    const err = this.#attempt && capabilityRefusal(this.#attempt.call.capabilities, method, params);
    if (err) {
      this.#fail(err.toResponse(this.#attempt!.id), 400);
      return Promise.reject(new JsonRpcError(ErrorCode.MethodNotFound, `the client did not declare the capability "${method}" needs`));
    }
    const key = this.#newKey(method.split('/')[0]!, (params?._meta as Record<string, unknown> | undefined)?.[INPUT_KEY_HINT]);
    const offered = this.#offered.get(key);
    if (offered) {
      this.#offered.delete(key);
      // Held to its question's schema, as a retry's answer to a question already out is (ModernService).
      return takenAnswer(key, method, params, offered, (err) => this.abandon(err));
    }
    return this.#hold(key, method, clientParams(params), signal, 'cancelled by the upstream');
  }

  /**
   * The gateway's own question (a confirmation rule's elicitation): a round like an upstream's, except
   * that only a retry presenting that round's sealed requestState answers it (answers a first call
   * brought along are never taken), and that an exchange asks it once (a rerun after URL elicitation
   * goes on with the answer given). After `timeoutMs`, at most the continuation's lifetime, it rejects
   * with RequestTimeout; when `signal` fires, with the reason.
   */
  confirm(params: Record<string, unknown>, signal: Cancellation, timeoutMs: number): Promise<Record<string, unknown>> {
    if (this.#confirmed) return Promise.resolve(this.#confirmed);
    if (this.#over || signal.aborted) return Promise.reject(new JsonRpcError(ErrorCode.InternalError, 'the request ended before it could be confirmed'));
    const stop = new Cancellation();
    const ms = Math.min(timeoutMs, this.#hooks.ttlMs);
    const timer = setTimeout(() => stop.abort(CONFIRM_TIMEOUT), ms);
    const relay = () => stop.abort(signal.reason);
    signal.onAbort(relay);
    return this.#hold(this.#newKey('confirm', 'confirm'), 'elicitation/create', params, stop, 'the confirmation was abandoned').then(
      (answer) => (this.#confirmed = answer),
      (err: unknown) => {
        throw stop.reason === CONFIRM_TIMEOUT ? new JsonRpcError(ErrorCode.RequestTimeout, `the client did not answer the confirmation within ${ms} ms`) : err;
      },
    ).finally(() => {
      clearTimeout(timer);
      signal.offAbort(relay);
    });
  }

  /** A question held until a retry answers it, or `signal` gives it up. */
  #hold(key: string, method: string, params: Record<string, unknown>, signal: Cancellation, abandoned: string): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      this.#asking().set(key, { method, params, resolve, reject });
      signal.onAbort(() => {
        if (this.#asks.delete(key)) reject(new JsonRpcError(ErrorCode.InternalError, abandoned));
      });
      this.#scheduleRound();
    });
  }

  /** The refusal for the first held question `call` did not declare it can answer, if any. */
  #unanswerable(call: ModernCall): JsonRpcError | undefined {
    for (const a of this.#asks.values()) {
      const err = capabilityRefusal(call.capabilities, a.method, a.params);
      if (err) return err;
    }
    return undefined;
  }

  /** The exchange's own map of questions, made on its first question. */
  #asking(): Map<string, Ask> {
    if (this.#asks === NO_ASKS) this.#asks = new Map();
    return this.#asks;
  }

  /** An unused key: the upstream's hint when it is one, else `<kind>-<n>`. */
  #newKey(kind: string, hint: unknown): string {
    const used = (this.#usedKeys ??= new Set());
    let key = typeof hint === 'string' && KEY.test(hint) && !used.has(hint) ? hint : '';
    while (key === '' || used.has(key)) key = `${kind}-${this.#nextKey++}`;
    used.add(key);
    return key;
  }

  /** Request-scoped notifications (progress, logs) go on the waiting attempt's stream, if any. */
  notify(message: JsonRpcMessage): void {
    this.#attempt?.notify(message);
  }

  /**
   * The upstream's progress, as the waiting attempt asked for it: under that attempt's own token (a
   * retry's, after a round; the spec lets progress name only a token of an active request), and not at
   * all when it brought none.
   */
  progress(params: Record<string, unknown>): void {
    const attempt = this.#attempt;
    const token = (attempt?.call.params._meta as Record<string, unknown> | undefined)?.progressToken;
    if (token === undefined) return;
    attempt!.notify({ jsonrpc: '2.0', method: 'notifications/progress', params: { ...params, progressToken: token } });
  }

  /** The input requests still unanswered, as the client sees them. */
  inputRequests(): Record<string, { method: string; params: Record<string, unknown> }> {
    const out: Record<string, { method: string; params: Record<string, unknown> }> = {};
    for (const [key, a] of this.#asks) out[key] = { method: a.method, params: a.params ?? {} };
    return out;
  }

  /** Asks that arrive together (one upstream turn) leave in one round. */
  #scheduleRound(): void {
    if (!this.#attempt) return;
    // Questions an upstream sends together arrive in separate reads of its pipe: a round waits for a short
    // quiet spell (restarted by each new question, bounded in all) so that they leave together.
    if (this.#flush) clearTimeout(this.#flush);
    else this.#roundStarted = performance.now();
    const wait = Math.max(0, Math.min(ROUND_QUIET_MS, this.#roundStarted + ROUND_MAX_MS - performance.now()));
    this.#flush = setTimeout(() => {
      this.#flush = undefined;
      const sink = this.#attempt;
      if (!sink || this.#asks.size === 0 || this.#over) return;
      this.#attempt = undefined;
      const result = { resultType: 'input_required', inputRequests: this.inputRequests(), requestState: this.#hooks.seal(this) };
      this.onRound?.(this.#asks.size);
      // Shaped as a complete result is, for its serverInfo (an input_required result gets no cache hints).
      sink.finish(this.#hooks.shape(sink.call, { jsonrpc: '2.0', id: sink.id, result }, this.#retried, undefined));
      // Never assume the client retries: the held upstream call ends with the continuation's lifetime.
      this.#expiry = setTimeout(() => this.#end('no retry came before the request state expired'), this.#hooks.ttlMs);
      this.#expiry.unref();
    }, wait);
  }

  #deliver(response: JsonRpcResponse): void {
    const sink = this.#attempt!;
    this.#attempt = undefined;
    this.#over = true;
    clearTimeout(this.#expiry);
    this.#hooks.ended(this, 'answered');
    // The response is this exchange's own: it takes the answering attempt's id in place.
    response.id = sink.id;
    const shaped = this.#hooks.shape(sink.call, completed(response), this.#retried, this.#cache);
    // The era's own refusals (headers, capabilities, version) are HTTP 400: the gateway's of the client's request, and an upstream's -32021 for what the client lacks (upstreamRefusal makes the rest an upstream failure).
    sink.finish(shaped, 'error' in shaped && shaped.error.code <= ErrorCode.HeaderMismatch && shaped.error.code >= ErrorCode.UnsupportedProtocolVersion ? 400 : 200);
  }

  /**
   * The standing the call runs in ended under it (an operator, a reload, shutdown): the waiting attempt
   * is answered with `err` (its POST would otherwise stay open for ever), then the call is stopped.
   */
  abandon(err: JsonRpcError): void {
    if (this.#over) return;
    const sink = this.#attempt;
    if (sink) this.#fail(err.toResponse(sink.id), 200, err.message);
    else this.#end(err.message);
  }

  #fail(response: JsonRpcResponse, status: number, reason = 'refused'): void {
    const sink = this.#attempt;
    this.#attempt = undefined;
    sink?.finish(response, status);
    this.#end(reason);
  }

  #end(reason: string): void {
    if (this.#over) return;
    this.#over = true;
    clearTimeout(this.#expiry);
    if (this.#flush) clearTimeout(this.#flush);
    refuseHeld(this.#asks, `the client request ended (${reason})`);
    this.cancel.abort(reason);
    this.#hooks.ended(this, reason);
  }
}

