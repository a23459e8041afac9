import { GatewayError, toJsonRpcError } from '../../errors.js';
import { asCalled, violationMessage } from '../../policy/argument-rules.js';
import { countUnrouted, type Stage } from '../request-pipeline.js';

/** The tenant's argument rules, checked before anything is routed: a refused call never reaches an upstream. */
export const argumentsStage: Stage = (ctx, next) => {
  const { req, host } = ctx;
  const violation = host.guard.checkArguments(req.method, req.params, host.endpoint.prefixNames ? undefined : host.endpoint.pools[0]?.name);
  if (!violation) return next(ctx);
  host.guard.refused(req.method, req.params, `arguments:${violation.rule}`, ctx.startedAt, ctx.confirmation);
  host.observer.denied('argument_rule');
  // "unknown": the name matched a glob, which does not make it a catalogue entry (nor a bounded label).
  countUnrouted(ctx, 'denied', 'unknown');
  // The audit line above keeps the canonical name; the client is told the name it called.
  const told = ctx.exposedName === undefined ? violation : asCalled(violation, ctx.exposedName);
  const { rule, tool, argument } = told;
  const err = new GatewayError('SWB_ARGUMENT_REFUSED', violationMessage(told), argument === undefined ? { rule, tool } : { rule, tool, argument });
  return Promise.resolve(toJsonRpcError(err, host.logger).toResponse(req.id));
};
