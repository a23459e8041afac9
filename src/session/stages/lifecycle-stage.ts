import { ErrorCode } from '../../jsonrpc/error-codes.js';
import { JsonRpcError } from '../../jsonrpc/json-rpc-error.js';
import type { Stage } from '../request-pipeline.js';

/**
 * The session's lifecycle: initialize and ping are answered here; anything else needs an initialized
 * session (a request that overtook notifications/initialized is held for it, for a bounded time), and
 * an id the client is not already using for a request in flight.
 */
export const lifecycleStage: Stage = async (ctx, next) => {
  const { req, host } = ctx;
  if (req.method === 'initialize') return host.initialize(req);
  if (req.method === 'ping') return { jsonrpc: '2.0', id: req.id, result: {} };
  if (host.state === 'UNINITIALIZED' || !host.router) {
    return new JsonRpcError(ErrorCode.InvalidRequest, `Invalid Request: "${req.method}" before initialize; send initialize first`).toResponse(req.id);
  }
  if (host.state === 'INITIALIZING' && !(await host.whenActive())) {
    // The spec: a client sends nothing but pings before the handshake is done, and the initialized
    // notification is what says it is done. Well-behaved clients whose notification is merely still on
    // its way (another HTTP connection) were held above until it arrived.
    return new JsonRpcError(ErrorCode.InvalidRequest, `Invalid Request: "${req.method}" before notifications/initialized; the session is not initialized yet, send notifications/initialized first`).toResponse(req.id);
  }
  if (host.inflight.has(req.id)) {
    return new JsonRpcError(ErrorCode.InvalidRequest, `Invalid Request: id ${JSON.stringify(req.id)} is already in use by a request in flight`).toResponse(req.id);
  }
  return next();
};
