import { GatewayError } from '../../errors.js';
import { ErrorCode } from '../../jsonrpc/error-codes.js';
import { NotFoundError } from '../../jsonrpc/not-found.js';
import type { JsonRpcResponse } from '../../jsonrpc/types.js';
import { elapsed, type RequestContext, type Stage } from '../request-pipeline.js';

type Outcome = 'ok' | 'error' | 'tool_error' | 'cancelled' | 'denied';

function outcomeOf(ctx: RequestContext, withheld: string | undefined): Outcome {
  if (ctx.cancel?.aborted) return 'cancelled';
  if (withheld !== undefined) return 'denied';
  if (ctx.result === undefined) return 'error';
  return ctx.result.isError === true ? 'tool_error' : 'ok';
}

/**
 * The tool label: only names that exist become label values, so a client cannot mint new series. A name
 * exists when the call got a result or the router found its definition; a call that failed before that
 * (its upstream down or restarting, its tools not listed) cannot tell, and is "unknown".
 */
function toolLabel(ctx: RequestContext, error: unknown): string | undefined {
  if (ctx.decision?.kind !== 'tool') return undefined;
  if (error instanceof NotFoundError) return 'unknown';
  return ctx.result !== undefined || ctx.toolFound === true ? ctx.decision.name : 'unknown';
}

/**
 * The rule that withheld the routed name, if one did: hidden text (answered as an unknown name), or tool
 * pinning (a changed or new definition not approved). Both are denials, audited and counted as such.
 */
function withheldBy(error: unknown): string | undefined {
  if (error instanceof NotFoundError) return error.rule;
  if (error instanceof GatewayError && error.code === 'SWB_TOOL_WITHHELD') return typeof error.details?.rule === 'string' ? error.details.rule : 'pinning.withhold';
  return undefined;
}

/**
 * A 2026-07-28 call's upstream -32042 naming URLs to open: no answer but a URL round (see Exchange), after
 * which the call is made again. The call's one audit line is that later run's, or written when it ends
 * in the round (ModernSession.run); before, each run had a line, and a call made again had two.
 */
function urlRound(ctx: RequestContext, response: JsonRpcResponse): boolean {
  if (ctx.host.era !== 'modern' || ctx.spec?.mrtr !== true || !('error' in response) || response.error.code !== ErrorCode.UrlElicitationRequired) return false;
  const list = (response.error.data as { elicitations?: unknown } | undefined)?.elicitations;
  return Array.isArray(list) && list.length > 0;
}

/** Records what the routed request came to: the audit line and the request metrics. */
export const observeStage: Stage = async (ctx, next) => {
  const answer = await next(ctx);
  const { req, host } = ctx;
  // A name the gateway withholds (hidden text, tool pinning): audited as the denial it is.
  const withheld = withheldBy(ctx.error);
  const outcome = outcomeOf(ctx, withheld);
  const upstream = host.router!.upstreamOf(req.method, req.params, ctx.spec);
  const response = ctx.response;
  const round = response !== undefined && urlRound(ctx, response);
  if (ctx.decision && host.guard.audits(req.method) && !round) {
    const failed = response !== undefined && 'error' in response;
    const decision = withheld === undefined ? ctx.decision : { allowed: false, rule: withheld };
    host.guard.record(req.method, req.params, decision, outcome, ctx.startedAt, failed ? response.error : ctx.result, upstream, failed ? undefined : ctx.resultBytes, ctx.confirmation);
  }
  if (withheld !== undefined) host.observer.denied(withheld.startsWith('pinning.') ? 'tool_pinning' : 'hidden_text');
  const done = {
    method: ctx.spec?.metric ?? 'other',
    endpoint: host.endpoint.config.path,
    upstream: upstream ?? (ctx.spec?.list ? 'all' : 'none'),
    outcome,
    seconds: elapsed(ctx),
    tool: toolLabel(ctx, ctx.error),
    era: host.era,
  };
  // A URL round is no answer: counted as an error, a call made again once its URLs were visited was two.
  if (round) ctx.uncounted = done;
  else host.observer.requestDone(done);
  return answer;
};
