import { GatewayError, toJsonRpcError } from '../../errors.js';
import { countUnrouted, type Stage } from '../request-pipeline.js';

/** How long a cancelled request keeps its slot when its tenant's limits.cancelledHoldMs does not say. */
export const CANCELLED_HOLD_MS = 5000;

/**
 * The tenant's concurrent-request limit: a slot is held for the rest of the path and released after it,
 * except while the request waits on its client for its upstream (SessionGuard.whileAsking).
 * A tenant without the limit passes straight on (no promise of this stage's own on the hot path).
 *
 * A request cancelled once past this stage (notifications/cancelled, a 2026-07-28 call's connection
 * dropped, its session ended) keeps its slot for limits.cancelledHoldMs more. A cancellation is advisory
 * in MCP: the server may go on running the call and says nothing when (or whether) it stops. Given back at
 * once (before 2026-12-07), a client limited to N in flight had as many running on its upstreams as it
 * could start and cancel. Bounded, as nothing says when to stop: a server that stopped at once costs its
 * tenant the slot for the hold; one running past it is not counted then.
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
  // Cancelled before it got here (a 2026-07-28 exchange brings its cancellation): it reaches no upstream.
  const reaches = ctx.cancel?.aborted !== true;
  try {
    return await next(ctx);
  } finally {
    guard.releaseRequest(req.id, reaches && ctx.cancel?.aborted === true ? (guard.tenant.config.limits.cancelledHoldMs ?? CANCELLED_HOLD_MS) : 0);
  }
}
