import { GatewayError, toJsonRpcError } from '../../errors.js';
import { JsonRpcError } from '../../jsonrpc/json-rpc-error.js';
import { NotFoundError } from '../../jsonrpc/not-found.js';
import type { JsonRpcErrorObject, JsonRpcResponse, RequestId } from '../../jsonrpc/types.js';
import type { HiddenTextPolicy, ResultCaller, ResultKind } from '../../policy/hidden-text-policy.js';
import type { Finding } from '../../policy/hidden-text-walk.js';
import type { RequestContext, Stage } from '../request-pipeline.js';

/** The results scanned, and what each comes from. */
const RESULTS: ReadonlyMap<string, ResultKind> = new Map([
  ['tools/call', 'tool'],
  ['prompts/get', 'prompt'],
  ['resources/read', 'resource'],
  // Values a client offers its user (and its model) to fill an argument with, picked and sent on as they
  // are: before 2026-12-06 they passed unscanned.
  ['completion/complete', 'completion'],
]);

/** Whether an answer (result or upstream error) to `method` is scanned here, scanning of results on. */
export const scansAnswersTo = (method: string): boolean => RESULTS.has(method);

/**
 * Hidden-text scanning (guardrails.hiddenText, as in force for the caller's tenant). Definitions: the
 * route gets the policy as its screen, and the router leaves out or cleans what it lists and refuses
 * calls to what it withholds. Results: scanned here on their way back, then passed on, cleaned, or
 * replaced by an SWB_HIDDEN_TEXT_BLOCKED error. Inside the observe stage, so that the audit line and
 * the metrics see what the client gets. With scanning off (the default) a request pays one lookup
 * that answers undefined.
 */
export const hiddenTextStage: Stage = (ctx, next) => {
  const { host } = ctx;
  const policy = host.endpoint.hiddenText.for(host.guard.tenant);
  if (policy === undefined) return next(ctx);
  if (policy.definitions !== 'off') ctx.screen = policy;
  const item = policy.results === 'off' ? undefined : RESULTS.get(ctx.req.method);
  if (item === undefined) return next(ctx);
  return next(ctx).then((answer) => scanned(ctx, policy, item, answer));
};

/**
 * An answer to a request made before this stage (search_tools' failure: an upstream's error when no tool
 * list could be read, answered by the tools stage), scanned as the route's would be: before 2026-12-08 it
 * passed unscanned. `ctx.error`: what failed.
 */
export function screenedAnswer(ctx: RequestContext, answer: JsonRpcResponse): JsonRpcResponse | undefined {
  const policy = ctx.host.endpoint.hiddenText.for(ctx.host.guard.tenant);
  const item = policy === undefined || policy.results === 'off' ? undefined : RESULTS.get(ctx.req.method);
  return item === undefined ? answer : scanned(ctx, policy!, item, answer);
}

/** Who the scanned answer was for, and what it answered (the audit line's caller fields). */
function callerOf(ctx: RequestContext, item: ResultKind): ResultCaller {
  const { req, host } = ctx;
  const guard = host.guard;
  const ref = item === 'completion' ? (req.params?.ref as { name?: unknown; uri?: unknown } | undefined) : undefined;
  const name = item === 'resource' ? req.params?.uri : item === 'completion' ? (ref?.name ?? ref?.uri) : req.params?.name;
  return { upstream: host.router?.upstreamOf(req.method, req.params, ctx.spec), name: String(name), tenant: guard.tenant.name, subject: guard.principal.subject, session: guard.session };
}

/**
 * An answer scanned on its way back: a result, or an upstream's JSON-RPC error (a host shows its message,
 * and often its data, to the model as the call's outcome, so it is scanned as a result is; unscanned, a
 * server whose result strip or block would have cleaned or refused put the same text in an error instead,
 * before 2026-12-06). The gateway's own errors are not an upstream's text: a GatewayError, and "not found",
 * which names what the client asked for. Passed on, cleaned, or replaced by SWB_HIDDEN_TEXT_BLOCKED.
 */
function scanned(ctx: RequestContext, policy: HiddenTextPolicy, item: ResultKind, answer: JsonRpcResponse | undefined): JsonRpcResponse | undefined {
  const payload = payloadOf(ctx, answer);
  if (answer === undefined || payload === undefined) return answer;
  const walked = policy.scanResult(payload);
  if (walked === undefined) return answer;
  const caller = callerOf(ctx, item);
  const verdict = policy.settleResult(item, walked, payload, caller);
  let response: JsonRpcResponse;
  if ('result' in verdict) {
    if (verdict.result === payload) return answer;
    response = 'error' in answer ? cleanError(ctx, verdict.result, answer.id) : cleanResult(ctx, verdict.result, answer.id);
  } else {
    response = refused(ctx, answer, blocked(whatWas(ctx, item, caller, 'error' in answer), verdict.blocked));
  }
  ctx.response = response;
  return response;
}

/**
 * What of an answer is scanned: its result, or an upstream's error as `{error}`; undefined when nothing is.
 * A gateway error about an upstream (details.upstream) may quote what it answered: the start of an HTTP
 * error's body (SWB_UPSTREAM_UNAVAILABLE, SWB_UPSTREAM_REQUEST_REFUSED, SWB_ARGUMENT_REFUSED), a value of its
 * broken answer (SWB_UPSTREAM_PROTOCOL). A host shows it to the model as the call's outcome, so it is scanned
 * as the upstream's error is (its message and details): before 2026-12-08 a server put in an HTTP 500's
 * body what strip would have cleaned from its result, or block refused, and it passed unscanned.
 */
function payloadOf(ctx: RequestContext, answer: JsonRpcResponse | undefined): Record<string, unknown> | undefined {
  if (answer === undefined) return undefined;
  if ('error' in answer) {
    const err = ctx.error;
    if (err instanceof GatewayError) return quotesUpstream(err) ? { error: { message: err.message, data: err.details } } : undefined;
    return err instanceof JsonRpcError && !(err instanceof NotFoundError) ? { error: answer.error } : undefined;
  }
  return 'result' in answer ? ctx.result : undefined;
}

/** Whether a gateway error is about an upstream, and so may quote it (see payloadOf). */
const quotesUpstream = (err: GatewayError): boolean => typeof err.details?.upstream === 'string';

function cleanResult(ctx: RequestContext, result: Record<string, unknown>, id: RequestId): JsonRpcResponse {
  ctx.result = result;
  return { jsonrpc: '2.0', id, result };
}

function cleanError(ctx: RequestContext, wire: Record<string, unknown>, id: JsonRpcResponse['id']): JsonRpcResponse {
  const err = ctx.error;
  if (err instanceof GatewayError) {
    // Still the gateway's error (its code, status and audit outcome), with the upstream's words cleaned.
    const { message, data } = wire.error as { message: string; data?: Record<string, unknown> };
    ctx.error = new GatewayError(err.code, message, data);
    return toJsonRpcError(ctx.error, ctx.host.logger).toResponse(id);
  }
  const clean = JsonRpcError.from(wire.error as JsonRpcErrorObject);
  ctx.error = clean;
  return clean.toResponse(id);
}

/** What a blocked answer was, for its SWB_HIDDEN_TEXT_BLOCKED message. */
function whatWas(ctx: RequestContext, item: ResultKind, caller: ResultCaller, failed: boolean): string {
  const name = item === 'tool' ? (ctx.exposedName ?? caller.name) : caller.name;
  if (failed) {
    const by = caller.upstream === undefined ? 'the upstream' : `upstream ${caller.upstream}`;
    return `The error ${by} answered ${item === 'completion' ? `a completion for ${name}` : `${item} ${name}`} with was`;
  }
  if (item === 'tool') return `Tool ${name} ran, but its result was`;
  if (item === 'prompt') return `The result of prompt ${name} was`;
  return item === 'completion' ? `The completion values for ${name} were` : `The contents of resource ${name} were`;
}

/** The answer replaced by SWB_HIDDEN_TEXT_BLOCKED. */
function refused(ctx: RequestContext, answer: JsonRpcResponse, err: GatewayError): JsonRpcResponse {
  ctx.result = undefined;
  ctx.error = err;
  return toJsonRpcError(err, ctx.host.logger).toResponse(answer.id);
}

/** The error a blocked answer becomes: what it was, that it was withheld and why, in kinds and places (never the text). */
export function blocked(what: string, findings: readonly Finding[]): GatewayError {
  const kinds = [...new Set(findings.map((f) => f.kind))].join(', ');
  return new GatewayError('SWB_HIDDEN_TEXT_BLOCKED', `${what} withheld by the gateway: hidden text (${kinds}) that hidden-text scanning blocks`, {
    findings: findings.map((f) => (f.fields === undefined ? { kind: f.kind, path: f.path, count: f.count } : { kind: f.kind, path: f.path, count: f.count, fields: f.fields })),
  });
}
