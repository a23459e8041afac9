import { randomUUID } from 'node:crypto';
import { unopenableUrl } from '../config/openable-url.js';
import { GatewayError } from '../errors.js';
import { Cancellation } from '../jsonrpc/cancellation.js';
import { capabilityName, missingCapability } from '../jsonrpc/client-capabilities.js';
import { invalidClientAnswer } from '../jsonrpc/client-answer.js';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import { clientCapabilityNeeds } from '../jsonrpc/methods.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import { INPUT_KEY_HINT, LOG_LEVELS, META_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_SERVER_INFO, META_VERSION } from '../jsonrpc/modern-meta.js';
import type { JsonRpcErrorObject } from '../jsonrpc/types.js';
import { MAX_QUOTED } from '../observability/bounded-warnings.js';
import { clipped } from '../observability/clipped.js';
import type { UpstreamCaller } from './upstream-caller.js';
import { MAX_ASKING } from './upstream-asks.js';

type Params = Record<string, unknown> | undefined;
type Result = Record<string, unknown>;

/** Rounds one call may take before the gateway gives up on an upstream that never completes. */
const MAX_ROUNDS = 16;
export const MODERN_VERSION = '2026-07-28';

/**
 * The capabilities a 2026-07-28 upstream is told for a request: those the gateway relays (`gateway`) that
 * the client behind it declared too. An upstream that adapts to them (skips a question, falls back) then
 * asks nothing the gateway would have to refuse for the client. A bare `elicitation: {}` is form mode.
 * The client's `sampling.tools` goes with sampling: the gateway relays a sampling request's tools as they
 * come, and an upstream keeping the spec's rule offers tools only to a client that declared them.
 * No client (a health check, the gateway's own listen): the gateway's own.
 */
export function relayedCapabilities(gateway: Record<string, unknown>, client: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!client) return gateway;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(gateway)) {
    const declared = client[k];
    if (declared === null || typeof declared !== 'object') continue;
    if (k !== 'elicitation') {
      const tools = (declared as Record<string, unknown>).tools;
      out[k] = k === 'sampling' && tools !== null && typeof tools === 'object' ? { ...(v as object), tools } : v;
      continue;
    }
    const modes = declared as Record<string, unknown>;
    const elicitation: Record<string, unknown> = {};
    if ('form' in modes || !('url' in modes)) elicitation.form = {};
    if ('url' in modes) elicitation.url = {};
    out.elicitation = elicitation;
  }
  return out;
}

/** The client capabilities an upstream's own requests need (sampling, elicitation, roots): what the gateway relays or refuses. */
const ASKED_OF_CLIENT: readonly string[] = ['sampling', 'elicitation', 'roots'];

/**
 * A request to a 2025 upstream as it is sent: the client capabilities a 2026-07-28 client's request carries
 * in `_meta` (kept for an upstream that reads them; see upstreamParams) without those the gateway did not
 * declare to this connection (roots on a shared one), whose requests it would refuse: told of them, an
 * upstream that adapts asked, and failed. The rest as the client declared them (its sampling.tools, its
 * elicitation modes). Unchanged (not copied) when nothing is left out.
 */
export function withRelayedCapabilities(params: Params, gateway: Record<string, unknown>): Params {
  const meta = params?._meta as Record<string, unknown> | undefined;
  const client = meta?.[META_CAPABILITIES] as Record<string, unknown> | undefined;
  if (client === null || typeof client !== 'object') return params;
  const dropped = ASKED_OF_CLIENT.filter((k) => k in client && (gateway[k] === null || typeof gateway[k] !== 'object'));
  if (dropped.length === 0) return params;
  const kept = { ...client };
  for (const k of dropped) delete kept[k];
  return { ...params, _meta: { ...meta, [META_CAPABILITIES]: kept } };
}

/**
 * What the gateway declares to a 2026-07-28 upstream on every request: its version, identity and
 * capabilities, and the log level the client behind it wants (the era has no logging/setLevel: without
 * a level in the request the upstream sends it no log messages).
 */
export function withModernMeta(params: Params, capabilities: Record<string, unknown>, logLevel?: string): Record<string, unknown> {
  const meta = params?._meta as Record<string, unknown> | undefined;
  // Each object starts with a member of its own and the copied ones follow, the gateway's then set over
  // them: on Node 20 (V8 11.3) a member added after a leading spread (`{ ...params, _meta }`) made a new
  // hidden class on every request.
  const out: Record<string, unknown> = { [META_VERSION]: MODERN_VERSION, ...meta };
  out[META_VERSION] = MODERN_VERSION;
  out[META_CAPABILITIES] = capabilities;
  out[META_CLIENT_INFO] = { name: 'switchboard', version: '0.1.0' };
  if (logLevel !== undefined && LOG_LEVELS.includes(logLevel)) out[META_LOG_LEVEL] = logLevel;
  const request: Record<string, unknown> = { _meta: out, ...params };
  request._meta = out;
  return request;
}

/**
 * A 2025 client's logging/setLevel, for a 2026-07-28 upstream (whose era has no such method): answered
 * here, the level checked as a 2025 server checks it; its session keeps it and sends it with each request.
 */
export function setLevelLocally(params: Params): Promise<Result> {
  if (LOG_LEVELS.includes(String(params?.level))) return Promise.resolve({});
  return Promise.reject(new JsonRpcError(ErrorCode.InvalidParams, `Invalid params: "level" must be one of ${LOG_LEVELS.join(', ')}`));
}

/** A modern result as a 2025 client knows results: without the era's own fields (the gateway adds its own for modern clients). */
export function legacyResult(result: Result): Result {
  if (!('resultType' in result) && !('ttlMs' in result) && !('cacheScope' in result) && !(result._meta as Result | undefined)?.[META_SERVER_INFO]) return result;
  const { resultType: _t, ttlMs: _ttl, cacheScope: _scope, ...rest } = result;
  const meta = rest._meta as Result | undefined;
  if (meta && META_SERVER_INFO in meta) {
    const { [META_SERVER_INFO]: _info, ...kept } = meta;
    if (Object.keys(kept).length > 0) rest._meta = kept;
    else delete rest._meta;
  }
  return rest;
}

export interface RoundOptions {
  caller: UpstreamCaller | undefined;
  callerRequestId: string | number | undefined;
  signal: Cancellation | undefined;
  upstream: string;
  /** The request's method: only tools/call, prompts/get and resources/read may be answered input_required (unchecked when absent). */
  method?: string | undefined;
  /** Told of each input_required round (its number from 1, how many requests it puts to the client): a span event. */
  onRound?: ((round: number, asks: number) => void) | undefined;
  /** Told of each input_required round too: the upstream has answered, what follows waits on the client. */
  onAnswering?: (() => void) | undefined;
  /** The upstream refused the request's headers (-32020): true when the definitions they come from were out of date and are fresh now. */
  refresh?: (() => Promise<boolean> | undefined) | undefined;
  /** Where an upstream's refusal of what the gateway sent it (-32020, -32021, -32022) is logged at warn. */
  warnings?: { warn(fields: object, message: string): void } | undefined;
}

/** The era's refusals, when an upstream sends them: of what the gateway sent it, never of what the client sent the gateway. */
const REFUSED: Readonly<Record<number, string>> = {
  [ErrorCode.HeaderMismatch]: 'the headers the gateway sent it',
  [ErrorCode.MissingRequiredClientCapability]: 'the client capabilities the gateway declared to it',
  [ErrorCode.UnsupportedProtocolVersion]: 'the protocol version the gateway sent it',
};

/** Whether a client's declared capabilities lack every one of `required` (each mode of elicitation on its own; a bare `elicitation: {}` is form mode). */
function lacksAll(declared: Record<string, unknown>, required: unknown): boolean {
  if (required === null || typeof required !== 'object' || Object.keys(required).length === 0) return false;
  return Object.entries(required as Record<string, unknown>).every(([name, subs]) => {
    const has = declared[name];
    if (has === null || typeof has !== 'object') return true;
    const modes = has as Record<string, unknown>;
    return Object.keys((subs ?? {}) as object).some((sub) => (name === 'elicitation' && sub === 'form' ? modes.form === undefined && modes.url !== undefined : modes[sub] === undefined));
  });
}

/**
 * An upstream's -32020 (left after the one re-listing retry) or -32022 refuses the gateway's request to it,
 * not the client's: passed on as it was, a 2026-07-28 client got HTTP 400 saying that its own headers or
 * version were wrong, and a 2025 client a code its era does not have. It is the gateway's upstream failure
 * (SWB_UPSTREAM_PROTOCOL, answered a modern client with HTTP 200 like every upstream failure), logged at warn.
 * A -32021 is kept for a 2026-07-28 client that declared none of what the upstream requires: the gateway
 * tells the upstream what the client declared, so the client really lacks it, and the spec's answer (400
 * -32021 with requiredCapabilities, which the gateway itself sends when an input round needs what a request
 * lacks) lets it retry declaring it. When the client did declare it (the gateway does not relay it: roots on
 * a shared instance), or is a 2025 client (whose era has no such code), it is the gateway's failure too.
 */
export function upstreamRefusal(err: unknown, o: RoundOptions): unknown {
  if (!(err instanceof JsonRpcError) || !Object.hasOwn(REFUSED, err.code)) return err;
  const data = (err.data !== null && typeof err.data === 'object' ? err.data : {}) as Record<string, unknown>;
  const lacking = err.code === ErrorCode.MissingRequiredClientCapability && o.caller !== undefined && lacksAll(o.caller.capabilitiesFor?.(o.callerRequestId) ?? {}, data.requiredCapabilities);
  if (lacking && o.caller!.era === 'modern') return err;
  const details: Record<string, unknown> = { upstream: o.upstream, upstreamCode: err.code };
  for (const k of ['requiredCapabilities', 'supported', 'requested']) if (data[k] !== undefined) details[k] = data[k];
  // A 2025 client that declared none of it at initialize: its era has no -32021, and nothing is the gateway's
  // to mend (no warning); told what the upstream needs, not that the gateway's declaration was refused.
  if (lacking) {
    const needs = capabilityName(data.requiredCapabilities as Record<string, Record<string, unknown>>);
    return new GatewayError('SWB_UPSTREAM_PROTOCOL', `upstream "${o.upstream}" needs ${needs} of the client, which this session's client did not declare when it initialized`, details);
  }
  o.warnings?.warn({ ...details, upstreamMessage: err.message.slice(0, 200) }, 'upstream refused what the gateway sent it; answered as an upstream failure');
  return new GatewayError('SWB_UPSTREAM_PROTOCOL', `upstream "${o.upstream}" refused ${REFUSED[err.code]} (${err.code}: ${err.message.slice(0, 200)})`, details);
}

/**
 * A 2025 upstream's error as its caller gets it. -32020 … -32099 are the server's own to use in 2025, but the
 * 2026-07-28 era reserves them for the codes its spec defines: -32020, -32021 and -32022 its protocol refusals
 * (HTTP 400: headers, client capabilities, version), the rest for what a later revision defines. Passed on to
 * a 2026-07-28 client, a tool's failure read as the gateway refusing its request (told -32020, the SDK v2 client
 * re-lists the tools and calls again: the upstream ran the tool twice). Such a client gets it as the upstream
 * failure it is (-32603, message and data kept); a 2025 client, of the upstream's era, as it was sent. So is
 * the gateway's own request (no caller: the tool or prompt list a call is looked up in), whose failure reaches
 * whichever client's call waits on it: kept, a 2026-07-28 client's tools/call got HTTP 400 -32020. -32042 is
 * kept: a 2026-07-28 call's URL round is made of it (observe stage).
 */
export function legacyUpstreamError(error: JsonRpcErrorObject, caller: UpstreamCaller | undefined): JsonRpcError {
  const reserved = error.code <= ErrorCode.HeaderMismatch && error.code >= -32099 && error.code !== ErrorCode.UrlElicitationRequired;
  return new JsonRpcError(reserved && (caller === undefined || caller.era === 'modern') ? ErrorCode.InternalError : error.code, error.message, error.data);
}

/**
 * A 2026-07-28 upstream's error as any caller gets it. Its era reserves -32020 … -32099 for the codes the spec
 * defines, and defines -32020, -32021 and -32022 (upstreamRefusal reads them); any other code there is one the
 * upstream has no right to: -32042 (URL elicitation, 2025-11-25 only, never reused) or one a later revision
 * may allocate. Passed on, a 2025-11-25 client read a -32042 as URL elicitation required (its links shown as
 * the upstream's questions), a 2026-07-28 client's call became a URL round, and any other code meant what the
 * client's revision makes of it. Every caller, of either era, gets it as the upstream's failure (-32603,
 * message and data kept).
 */
export function modernUpstreamError(error: JsonRpcErrorObject): JsonRpcError {
  const undefinedHere = error.code <= -32023 && error.code >= -32099;
  return new JsonRpcError(undefinedHere ? ErrorCode.InternalError : error.code, error.message, error.data);
}

/**
 * An input request's params as the client behind the call is asked them. A 2026-07-28 client is asked as the
 * upstream asked, under the upstream's own key (`key`, named by the hint its exchange reads and strips):
 * renamed `elicitation-1`, a client that knew the tool's questions could not answer them on its first request.
 * A URL-mode elicitation has no elicitationId in 2026-07-28 (correlation lives in requestState), but a
 * 2025-11-25 client's schema requires one: without it the official SDK refused the request as invalid and the
 * upstream's call failed. A 2025 client is given one of the gateway's (no notifications/elicitation/complete
 * follows: a modern upstream sends none).
 */
function forCaller(method: string, params: Params, caller: UpstreamCaller, key: string): Params {
  if (caller.era === 'modern') return { ...params, _meta: { ...(params?._meta as Record<string, unknown> | undefined), [INPUT_KEY_HINT]: key } };
  if (method !== 'elicitation/create' || params?.mode !== 'url' || typeof params.elicitationId === 'string') return params ?? undefined;
  return { ...params, elicitationId: randomUUID() };
}

/**
 * A client's answer as the upstream is sent it. One that breaks the schema of what it answers fails the
 * call (-32602, the client's input was invalid): an input response cannot be an error, and sent on, the
 * upstream met it as it came.
 */
function checkedAnswer(method: string, answer: Record<string, unknown>): Record<string, unknown> {
  const bad = invalidClientAnswer(method, answer);
  if (bad) throw new JsonRpcError(ErrorCode.InvalidParams, bad.message);
  return answer;
}

/**
 * A round's input requests put to the client all at once: a 2026-07-28 client behind the call gets them
 * in one round of its own (asked one after another, each became a round), a 2025 client as concurrent
 * requests. The first to fail stops the others (their answers would be thrown away).
 */
async function answersOf(asks: Asks, gateway: Record<string, unknown>, o: RoundOptions): Promise<Record<string, unknown>> {
  // What the gateway did not declare to the upstream is not put to the client (a shared connection's roots):
  // refused as a 2025 request of it is (-32601), and the call fails.
  for (const ask of Object.values(asks)) {
    const missing = typeof ask?.method === 'string' ? missingCapability(gateway, ask.method, (ask.params ?? undefined) as Params) : undefined;
    if (missing) throw new JsonRpcError(ErrorCode.MethodNotFound, `upstream "${o.upstream}" asked for "${ask.method as string}", but the gateway did not declare ${capabilityName(missing)} to it`);
  }
  const round = new Cancellation();
  const parent = o.signal;
  const stop = () => round.abort(parent?.reason);
  parent?.onAbort(stop);
  try {
    const asked = Object.entries(asks).filter(([, ask]) => typeof ask?.method === 'string');
    const answers = await Promise.all(asked.map(([key, ask]) => o.caller!.clientRequest(ask.method as string, forCaller(ask.method as string, ask.params as Params, o.caller!, key), o.callerRequestId, round, undefined, o.upstream))).catch((err: unknown) => {
      round.abort((err as Error).message);
      throw err;
    });
    return Object.fromEntries(asked.map(([key, ask], i) => [key, checkedAnswer(ask.method as string, answers[i]!)]));
  } finally {
    parent?.offAbort(stop);
  }
}

/** The requests whose result may be input_required, and the requests an input round may carry (schema 2026-07-28). */
const ROUND_METHODS: ReadonlySet<string> = new Set(['tools/call', 'prompts/get', 'resources/read']);
const INPUT_METHODS: Readonly<Record<string, string>> = clientCapabilityNeeds();
type Asks = Record<string, { method?: unknown; params?: unknown }>;

/**
 * An input_required result's input requests, when the era allows them: an upstream that answers another
 * request so (completion/complete, a list), or asks anything but elicitation/create, sampling/createMessage
 * or roots/list, breaks the protocol, and nothing of its round is put to the client. Before 2026-12-07 a
 * 2025 client was asked them as they came (a completion's elicitation; a `ping`, round after round). So is a
 * round of more than MAX_ASKING questions (before 2026-12-08 each was put to the client, all at once), and
 * one whose URL-mode elicitation's url is no URL to open (unopenableUrl; before 2026-12-08 relayed unchecked).
 */
function roundAsks(result: Result, o: RoundOptions): Asks {
  const broken = (what: string) => new GatewayError('SWB_UPSTREAM_PROTOCOL', `upstream "${o.upstream}" ${what}, which the 2026-07-28 era does not allow`, { upstream: o.upstream });
  if (o.method !== undefined && !ROUND_METHODS.has(o.method)) throw broken(`answered ${o.method} with input_required (only tools/call, prompts/get and resources/read may ask for input)`);
  const asks = result.inputRequests ?? {};
  if (asks === null || typeof asks !== 'object' || Array.isArray(asks)) throw broken('sent inputRequests that are no object');
  // Each is put to the client at once (a person, maybe): a 2025 upstream's own requests are bounded by MAX_ASKING
  // per connection, and without this bound one round of thousands, repeated round after round, reached the client.
  const count = Object.keys(asks).length;
  if (count > MAX_ASKING) throw new GatewayError('SWB_UPSTREAM_PROTOCOL', `upstream "${o.upstream}" asked the client ${count} questions in one input round (at most ${MAX_ASKING} are relayed)`, { upstream: o.upstream });
  for (const ask of Object.values(asks as Asks)) {
    const method = (ask as Asks[string] | null)?.method;
    if (typeof method !== 'string' || !Object.hasOwn(INPUT_METHODS, method)) {
      // Quoted cut: the upstream chooses its length, and the client receives the message whole.
      throw broken(`asked the client ${method === undefined ? 'nothing' : clipped(String(JSON.stringify(method)), MAX_QUOTED)} in an input round (one carries only ${Object.keys(INPUT_METHODS).join(', ')})`);
    }
  }
  for (const [key, ask] of Object.entries(asks as Asks)) checkUrlAsk(key, ask, o);
  return asks as Asks;
}

/**
 * A URL-mode elicitation's url is what the client opens in the user's browser: one that is no absolute https:
 * URL (http: to loopback), or carries credentials or unseen characters (unopenableUrl), fails the call as
 * the upstream's broken answer, logged at warn as the sessions log the refused asks of 2025 upstreams.
 */
function checkUrlAsk(key: string, ask: Asks[string], o: RoundOptions): void {
  const params = ask.params as Record<string, unknown> | null | undefined;
  if (ask.method !== 'elicitation/create' || params === null || typeof params !== 'object' || params.mode !== 'url') return;
  const why = unopenableUrl(params.url);
  if (why === undefined) return;
  // The key is the upstream's: quoted cut, as a method is.
  const field = `inputRequests[${clipped(JSON.stringify(key), MAX_QUOTED)}].params.url`;
  o.warnings?.warn({ upstream: o.upstream, field }, 'upstream elicitation refused: its URL is not one to open');
  throw new GatewayError('SWB_UPSTREAM_PROTOCOL', `upstream "${o.upstream}" asked the client to open a URL that is no URL to open: its ${field} ${why}; nothing was put to the user`, { upstream: o.upstream, field });
}

/**
 * A result whose resultType the gateway does not know (a tasks-extension "task" handle, which it never asked
 * for: it relays no extension capabilities), which the era says a client MUST consider invalid. Before
 * 2026-12-08 it was taken off and "complete" put back: a 2026-07-28 client got a complete result missing
 * what its method requires (a CallToolResult with no content), a 2025 client an empty tool result.
 */
function unknownResultType(resultType: unknown, upstream: string): GatewayError {
  const quoted = clipped(String(JSON.stringify(resultType)), MAX_QUOTED);
  return new GatewayError('SWB_UPSTREAM_PROTOCOL', `upstream "${upstream}" answered with resultType ${quoted}, which the gateway does not know (it knows "complete" and "input_required")`, { upstream });
}

/**
 * A call to a 2026-07-28 upstream, round by round: each input_required result's input requests are
 * put to the client behind the call (as the server→client requests a 2025 client knows, or as the
 * next round of a modern client's exchange), and the call is sent again with the answers and the
 * upstream's requestState exactly as it sent it.
 */
export async function callWithRounds(send: (params: Record<string, unknown>) => Promise<Result>, params: Params, gateway: Record<string, unknown>, o: RoundOptions): Promise<Result> {
  // The round's keys are the gateway's to send: its client's answers to this upstream's questions, the state
  // this upstream issued. A 2025 client's params carry none of its era (sent on, a state the upstream never
  // issued, answers to questions never put to the user); a 2026-07-28 client's were taken off (upstreamParams).
  const base = params !== undefined && ('inputResponses' in params || 'requestState' in params) ? { ...params, inputResponses: undefined, requestState: undefined } : params;
  // Asked again each round: a 2026-07-28 client's retry declares its capabilities (and log level) anew.
  const meta = () => withModernMeta(base, relayedCapabilities(gateway, o.caller?.capabilitiesFor?.(o.callerRequestId)), o.caller?.logLevelFor?.(o.callerRequestId));
  let out = meta();
  let refreshed = false;
  // Refused before it ran (the headers are checked first): made again, once, if the tool's definition was stale.
  const retried = async (err: unknown): Promise<Result> => {
    if (refreshed || (err as { code?: unknown } | undefined)?.code !== ErrorCode.HeaderMismatch || !(await o.refresh?.())) throw upstreamRefusal(err, o);
    refreshed = true;
    return send(out).catch((again: unknown) => {
      throw upstreamRefusal(again, o);
    });
  };
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const result = await send(out).catch(retried);
    if (result.resultType !== 'input_required') {
      if (result.resultType !== undefined && result.resultType !== 'complete') throw unknownResultType(result.resultType, o.upstream);
      o.caller?.cacheHint?.(o.callerRequestId, result.ttlMs, result.cacheScope);
      return legacyResult(result);
    }
    const asks = roundAsks(result, o);
    o.onRound?.(round + 1, Object.keys(asks).length);
    o.onAnswering?.();
    if (!o.caller && Object.keys(asks).length > 0) {
      throw new GatewayError('SWB_UPSTREAM_PROTOCOL', `upstream "${o.upstream}" asked for input on a request no client stands behind`, { upstream: o.upstream });
    }
    out = { ...meta(), inputResponses: await answersOf(asks, gateway, o) };
    if (typeof result.requestState === 'string') out.requestState = result.requestState;
  }
  throw new GatewayError('SWB_UPSTREAM_PROTOCOL', `upstream "${o.upstream}" asked for input more than ${MAX_ROUNDS} times in one call`, { upstream: o.upstream });
}
