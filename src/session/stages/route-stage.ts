import { GatewayError, toJsonRpcError } from '../../errors.js';
import { Cancellation } from '../../jsonrpc/cancellation.js';
import { ErrorCode } from '../../jsonrpc/error-codes.js';
import { JsonRpcError } from '../../jsonrpc/json-rpc-error.js';
import { NotFoundError, notFound } from '../../jsonrpc/not-found.js';
import type { JsonRpcResponse } from '../../jsonrpc/types.js';
import type { RouteContext } from '../../router/index.js';
import { withheldAs } from '../../router/pinned-call.js';
import type { Stage } from '../request-pipeline.js';
import { screenedUrlAsks } from '../screened-asks.js';
import { scansAnswersTo } from './hidden-text-stage.js';
import { screenedNotice, WITHHELD } from '../screened-notices.js';

/**
 * Sends the request on through the router (which refuses any method the table gives no route) with a
 * cancellation the client can trigger, filters what a list returns by policy, and answers.
 */
export const routeStage: Stage = async (ctx) => {
  const { req, host } = ctx;
  // A caller that must be able to stop the request before it gets here (a modern exchange) brings its own.
  const cancel = ctx.cancel ?? new Cancellation();
  ctx.cancel = cancel;
  host.inflight.set(req.id, cancel);
  const token = (req.params?._meta as Record<string, unknown> | undefined)?.progressToken;
  const onProgress = token === undefined ? undefined : (params: Record<string, unknown>) => {
    const shown = screenedNotice(host.endpoint.hiddenText, host.guard, 'notifications/progress', params, ctx); // a progress message's hidden text
    if (shown !== WITHHELD) host.progress(shown!, req.id);
  };
  let response: JsonRpcResponse;
  const route: RouteContext = { signal: cancel, requestId: req.id, onProgress, resultBytes: undefined, checkDefinition: ctx.checkDefinition, screen: ctx.screen, toolFound: false, tenant: host.guard.tenant };
  try {
    const result = host.guard.filterList(req.method, await host.router!.request(req.method, req.params, route), req.params);
    ctx.result = result;
    ctx.resultBytes = route.resultBytes;
    response = { jsonrpc: '2.0', id: req.id, result };
    if (ctx.spec?.sessionState) host.stateChanged(req.method, req.params);
  } catch (thrown) {
    const err = upstreamUrlAsks(ctx, thrown);
    ctx.error = err;
    // An unknown name is reported as the client sent it, not by the canonical name it was routed by.
    const shown = err instanceof NotFoundError && ctx.exposedName !== undefined ? notFound(err.absent, ctx.exposedName) : calledAs(ctx, err);
    response = toJsonRpcError(shown, host.logger).toResponse(req.id);
  } finally {
    host.inflight.delete(req.id);
    ctx.toolFound = route.toolFound;
  }
  ctx.response = response;
  if (!cancel.aborted) return response;
  // Cancelled by the client (no answer expected) or by shutdown (already answered).
  host.release(req.id);
  return undefined;
};

/** Pinning's refusal of a call by a curation rename told by the rename (the audit keeps the canonical name: ctx.error). */
function calledAs(ctx: Parameters<Stage>[0], err: unknown): unknown {
  const exposed = ctx.exposedName;
  if (exposed === undefined || !(err instanceof GatewayError) || err.code !== 'SWB_TOOL_WITHHELD') return err;
  return ctx.host.router?.curation.renameOf(String(ctx.req.params?.name)) === exposed ? withheldAs(err, exposed) : err;
}

/**
 * An upstream's -32042 (a JsonRpcError: the gateway's own consent link is a GatewayError) with its URL
 * elicitations marked as the upstream's, or refused for the gateway's voice (see screenedUrlAsks).
 */
function upstreamUrlAsks(ctx: Parameters<Stage>[0], err: unknown): unknown {
  if (!(err instanceof JsonRpcError) || err.code !== ErrorCode.UrlElicitationRequired) return err;
  const { host, req } = ctx;
  const screen = { hiddenText: host.endpoint.hiddenText, guard: host.guard, observer: host.observer, logger: host.logger, ownUrl: host.endpoint.ownUrl };
  // Its hidden text: scanned as the call's error where the hidden-text stage scans the answers, else here.
  return screenedUrlAsks(screen, err, err.upstream ?? host.router?.upstreamOf(req.method, req.params, ctx.spec), !scansAnswersTo(req.method));
}
