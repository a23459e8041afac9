import { notFound } from '../../jsonrpc/not-found.js';
import { countUnrouted, type Stage } from '../request-pipeline.js';

/**
 * Tenant policy on the request's target (tool, resource, prompt). Denied looks exactly like absent:
 * the caller learns nothing about what exists.
 */
export const policyStage: Stage = (ctx, next) => {
  const { req, host } = ctx;
  const decision = host.guard.check(req.method, req.params);
  ctx.decision = decision;
  if (!decision || decision.allowed) return next(ctx);
  // What the user answered, when an accepted confirmation is judged again (confirm-stage.ts): its audit line says so.
  host.guard.record(req.method, req.params, decision, 'denied', ctx.startedAt, undefined, undefined, undefined, ctx.confirmation);
  host.observer.denied(decision.reason ?? 'not_allowed');
  // Only names that exist become label values: a denied name is "unknown".
  countUnrouted(ctx, 'denied', decision.kind === 'tool' ? 'unknown' : undefined);
  // Named as the client named it: a renamed or shortened name must not give its canonical name away.
  return Promise.resolve(notFound(decision.absent, ctx.exposedName ?? decision.name).toResponse(req.id));
};
