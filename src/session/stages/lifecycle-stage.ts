import { Cancellation } from '../../jsonrpc/cancellation.js';
import { ErrorCode } from '../../jsonrpc/error-codes.js';
import { JsonRpcError } from '../../jsonrpc/json-rpc-error.js';
import type { JsonRpcResponse } from '../../jsonrpc/types.js';
import { clipped } from '../../observability/clipped.js';
import { countUnrouted, type Next, type RequestContext, type Stage } from '../request-pipeline.js';

/**
 * The session's lifecycle: initialize and ping are answered here; anything else needs an initialized
 * session (a request that overtook notifications/initialized is held for it, for a bounded time), and
 * an id the client is not already using for a request in flight. Not an async function: the common
 * path hands on without a promise of its own.
 */
export const lifecycleStage: Stage = (ctx, next) => {
  const { req, host } = ctx;
  if (req.method === 'initialize') return host.initialize(req);
  // A ping reusing the id of a request in flight is refused as any request is: answered {}, the client
  // took that for the other request's answer (one stream carries both on legacy HTTP+SSE), whose real
  // answer then came for an id it no longer waited on. Before 2026-12-08 only other methods were checked.
  if (req.method === 'ping') return host.inflight.has(req.id) ? idInUse(ctx) : Promise.resolve(counted(ctx, 'ok', { jsonrpc: '2.0', id: req.id, result: {} }));
  if (host.state === 'UNINITIALIZED' || !host.router) {
    return refuse(ctx, `Invalid Request: "${req.method}" before initialize; send initialize first`);
  }
  if (host.state === 'INITIALIZING') {
    // The spec: a client sends nothing but pings before the handshake is done, and the initialized
    // notification is what says it is done. Well-behaved clients whose notification is merely still on
    // its way (another HTTP connection) are held here until it arrives.
    return host.whenActive().then((active) =>
      active ? inflightCheck(ctx, next) : refuse(ctx, `Invalid Request: "${req.method}" before notifications/initialized; the session is not initialized yet, send notifications/initialized first`),
    );
  }
  return inflightCheck(ctx, next);
};

function inflightCheck(ctx: RequestContext, next: Next): Promise<JsonRpcResponse | undefined> {
  const { req, host } = ctx;
  if (host.inflight.has(req.id)) return idInUse(ctx);
  // In flight from here, not only once routed: a request waiting on the way (a limit kept in Redis) is
  // the client's to cancel and holds its id. The session lets go of it when the pipeline has answered.
  host.inflight.set(req.id, (ctx.cancel ??= new Cancellation()));
  return next(ctx);
}

/** The original keeps the id (its answer, its cancellation): only this request is refused. */
function idInUse(ctx: RequestContext): Promise<JsonRpcResponse> {
  const id = ctx.req.id;
  // Quoted cut, as the edge's refusal of one (a string id may be as long as the body allows).
  return refuse(ctx, `Invalid Request: id ${JSON.stringify(typeof id === 'string' ? clipped(id, 64) : id)} is already in use by a request in flight`);
}

function refuse(ctx: RequestContext, message: string): Promise<JsonRpcResponse> {
  return Promise.resolve(counted(ctx, 'error', new JsonRpcError(ErrorCode.InvalidRequest, message).toResponse(ctx.req.id)));
}

/**
 * Answered here, before the observe stage: counted here, as every refusal before it reports its own
 * metrics (a tools/call's name is not known to exist: "unknown").
 */
function counted(ctx: RequestContext, outcome: 'ok' | 'error', response: JsonRpcResponse): JsonRpcResponse {
  const { req } = ctx;
  countUnrouted(ctx, outcome, req.method === 'tools/call' ? 'unknown' : undefined);
  return response;
}
