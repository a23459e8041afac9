import { GatewayError, toJsonRpcError } from '../../errors.js';
import type { JsonRpcResponse } from '../../jsonrpc/types.js';
import type { HiddenTextPolicy, ResultKind } from '../../policy/hidden-text-policy.js';
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

function scanned(ctx: RequestContext, policy: HiddenTextPolicy, item: ResultKind, answer: JsonRpcResponse | undefined): JsonRpcResponse | undefined {
  const result = ctx.result;
  if (answer === undefined || result === undefined || !('result' in answer)) return answer;
  const walked = policy.scanResult(result);
  if (walked === undefined) return answer;
  const { req, host } = ctx;
  const guard = host.guard;
  const name = item === 'resource' ? req.params?.uri : req.params?.name;
  const verdict = policy.settleResult(item, walked, result, {
    upstream: host.router?.upstreamOf(req.method, req.params, ctx.spec),
    name: String(name),
    tenant: guard.tenant.name,
    subject: guard.principal.subject,
    session: guard.session,
  });
  let response: JsonRpcResponse;
  if ('result' in verdict) {
    if (verdict.result === result) return answer;
    ctx.result = verdict.result;
    response = { jsonrpc: '2.0', id: answer.id, result: verdict.result };
  } else {
    const err = blocked(item, ctx.exposedName ?? String(name), verdict.blocked);
    ctx.result = undefined;
    ctx.error = err;
    response = toJsonRpcError(err, host.logger).toResponse(answer.id);
  }
  ctx.response = response;
  return response;
}

/** The error a blocked result becomes: what ran, that its answer was withheld and why, in kinds and places (never the text). */
function blocked(item: ResultKind, name: string, findings: readonly Finding[]): GatewayError {
  const what = item === 'tool' ? `Tool ${name} ran, but its result was` : item === 'prompt' ? `The result of prompt ${name} was` : `The contents of resource ${name} were`;
  const kinds = [...new Set(findings.map((f) => f.kind))].join(', ');
  return new GatewayError('SWB_HIDDEN_TEXT_BLOCKED', `${what} withheld by the gateway: hidden text (${kinds}) that hidden-text scanning blocks`, {
    findings: findings.map((f) => (f.fields === undefined ? { kind: f.kind, path: f.path, count: f.count } : { kind: f.kind, path: f.path, count: f.count, fields: f.fields })),
  });
}
