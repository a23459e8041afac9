import { GatewayError, toJsonRpcError } from '../../errors.js';
import { JsonRpcError } from '../../jsonrpc/json-rpc-error.js';
import { NotFoundError } from '../../jsonrpc/not-found.js';
import type { JsonRpcErrorObject, JsonRpcFailure, JsonRpcResponse } from '../../jsonrpc/types.js';
import type { HiddenTextPolicy, ResultCaller, ResultKind } from '../../policy/hidden-text-policy.js';
import type { Finding } from '../../policy/hidden-text-walk.js';
import type { RequestContext, Stage } from '../request-pipeline.js';

/** The results scanned, and what each comes from. */
const RESULTS: ReadonlyMap<string, ResultKind> = new Map([
  ['tools/call', 'tool'],
  ['prompts/get', 'prompt'],
  ['resources/read', 'resource'],
]);

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

/** Who the scanned answer was for, and what it answered (the audit line's caller fields). */
function callerOf(ctx: RequestContext, item: ResultKind): ResultCaller {
  const { req, host } = ctx;
  const guard = host.guard;
  const name = item === 'resource' ? req.params?.uri : req.params?.name;
  return { upstream: host.router?.upstreamOf(req.method, req.params, ctx.spec), name: String(name), tenant: guard.tenant.name, subject: guard.principal.subject, session: guard.session };
}

function scanned(ctx: RequestContext, policy: HiddenTextPolicy, item: ResultKind, answer: JsonRpcResponse | undefined): JsonRpcResponse | undefined {
  if (answer !== undefined && 'error' in answer) return scannedError(ctx, policy, item, answer);
  const result = ctx.result;
  if (answer === undefined || result === undefined || !('result' in answer)) return answer;
  const walked = policy.scanResult(result);
  if (walked === undefined) return answer;
  const caller = callerOf(ctx, item);
  const verdict = policy.settleResult(item, walked, result, caller);
  let response: JsonRpcResponse;
  if ('result' in verdict) {
    if (verdict.result === result) return answer;
    ctx.result = verdict.result;
    response = { jsonrpc: '2.0', id: answer.id, result: verdict.result };
  } else {
    const what = item === 'tool' ? `Tool ${ctx.exposedName ?? caller.name} ran, but its result was` : item === 'prompt' ? `The result of prompt ${caller.name} was` : `The contents of resource ${caller.name} were`;
    response = refused(ctx, answer, blocked(what, verdict.blocked));
  }
  ctx.response = response;
  return response;
}

/**
 * An upstream's JSON-RPC error: a host shows its message (and often its data) to the model as the call's
 * outcome, so it is scanned as a result is. Unscanned, a server whose result strip or block would have
 * cleaned or refused put the same text in an error instead (before 2026-12-06). The gateway's own errors
 * are not an upstream's text: a GatewayError, and "not found", which names what the client asked for.
 */
function scannedError(ctx: RequestContext, policy: HiddenTextPolicy, item: ResultKind, answer: JsonRpcFailure): JsonRpcResponse {
  const err = ctx.error;
  if (!(err instanceof JsonRpcError) || err instanceof NotFoundError) return answer;
  const wire = { error: answer.error };
  const walked = policy.scanResult(wire);
  if (walked === undefined) return answer;
  const caller = callerOf(ctx, item);
  const verdict = policy.settleResult(item, walked, wire, caller);
  let response: JsonRpcResponse;
  if ('result' in verdict) {
    if (verdict.result === wire) return answer;
    const clean = JsonRpcError.from(verdict.result.error as JsonRpcErrorObject);
    ctx.error = clean;
    response = clean.toResponse(answer.id);
  } else {
    const named = item === 'tool' ? `tool ${ctx.exposedName ?? caller.name}` : item === 'prompt' ? `prompt ${caller.name}` : `resource ${caller.name}`;
    const by = caller.upstream === undefined ? 'the upstream' : `upstream ${caller.upstream}`;
    response = refused(ctx, answer, blocked(`The error ${by} answered ${named} with was`, verdict.blocked));
  }
  ctx.response = response;
  return response;
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
