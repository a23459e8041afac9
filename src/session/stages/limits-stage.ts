import { GatewayError, toJsonRpcError } from '../../errors.js';
import { countUnrouted, type Stage } from '../request-pipeline.js';

/**
 * The tenant's concurrent-request limit: a slot is held for the rest of the path and released after it,
 * except while the request waits on its client for its upstream (SessionGuard.whileAsking).
 * A tenant without the limit passes straight on (no promise of this stage's own on the hot path).
 */
export const limitsStage: Stage = (ctx, next) => {
  if (ctx.host.guard.tenant.config.limits.concurrentRequests === undefined) return next(ctx);
  return limited(ctx, next);
};

async function limited(ctx: Parameters<Stage>[0], next: Parameters<Stage>[1]): ReturnType<Stage> {
  const { req, host } = ctx;
  const { guard } = host;
  const slot = guard.acquireRequest(req.id);
  if (slot !== true && !(await slot)) {
    host.observer.rateLimited('concurrent_requests');
    // Its audit line as any call's: the time since it began (a user's confirmation included) and what the user answered.
    guard.refused(req.method, req.params, 'limits.concurrentRequests', ctx.startedAt, ctx.confirmation);
    // A request refused is a request answered: counted with its outcome, as the policy stage counts a denial.
    countUnrouted(ctx, 'rate_limited', req.method === 'tools/call' ? 'unknown' : undefined);
    const max = guard.tenant.config.limits.concurrentRequests;
    return toJsonRpcError(new GatewayError('SWB_RATE_LIMITED', `tenant "${guard.tenant.name}" has its maximum of ${max} requests in flight; retry when one completes`), host.logger).toResponse(req.id);
  }
  try {
    return await next(ctx);
  } finally {
    guard.releaseRequest(req.id);
  }
}
