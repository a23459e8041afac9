import type { EdgeReply, EdgeRequest } from './edge-exchange.js';
import type { Principal } from '../auth/principal.js';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import { authorizeRequest, type EdgeAuth } from './authorize-request.js';
import type { ConnectionLimits } from './connection-limits.js';
import { isRefusal, sendError, type Refusal } from './replies.js';
import { checkHostAndOrigin, type GuardOptions } from './request-guard.js';
import { allowOrigin } from './cors.js';
import { lingerAfterRefusal } from './linger-after-refusal.js';
import { QueuedTurns } from '../listener/pipelined-turns.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling: set by the front door on every MCP route before the route runs. */
    principal: Principal | null;
    /** See EdgeRequest.rateOwed. */
    rateOwed: boolean;
  }
}

export interface FrontDoorOptions {
  auth: EdgeAuth;
  guard: GuardOptions;
  limits?: ConnectionLimits | undefined;
  /**
   * Whether the request says a replica of the group forwarded it (its rate was counted there): 'proven'
   * by its headers alone (the tunnel's mark), 'claimed' when only its body can prove it (a signature).
   */
  forwardClaim?: ((req: EdgeRequest) => 'proven' | 'claimed' | undefined) | undefined;
  /** server.maxBodyBytes: a refused request's body up to this size is read after the refusal (linger-after-refusal.ts). */
  maxBodyBytes: number;
}

/**
 * The one front door of every MCP route, an onRequest hook: the Host/Origin guard, authentication and
 * the tenant's endpoint grant, all from the headers alone, before a byte of the body is read. A refused
 * request is answered at once and its connection closed, so a client without a valid token can neither
 * make the gateway wait for a body nor keep the socket (a body within maxBodyBytes still being uploaded
 * is read and dropped for a few seconds after the answer, so that its client reads it: linger-after-refusal.ts). The tenant's rate is taken here too, except for
 * a POST: only its body says how many JSON-RPC requests it carries (an answer to a question the gateway
 * put to the client, or a notification, carries none), so its route takes it (see EdgeRequest.rateOwed).
 */
export function frontDoor(o: FrontDoorOptions): (endpoint: string, metadataPath?: string) => (req: EdgeRequest, reply: EdgeReply) => Promise<EdgeReply | undefined> {
  const turns = new QueuedTurns();
  // One hook per endpoint and metadata (see LEGACY_METADATA), bound (the edge plugin keeps them by both).
  return (endpoint, metadataPath = endpoint) => async (req, reply) => {
    const socket = req.raw.socket;
    // Pipelined behind an answer still going out (no socket of its own yet): served in its turn (QueuedTurns).
    if (!reply.raw.socket && socket) {
      const turn = turns.wait(socket, reply.raw);
      if (!turn || !(await turn)) return reply;
    }
    o.limits?.requestArrived(socket);
    const header = req.headers.origin;
    const origin = Array.isArray(header) ? header[0] : header;
    const why = checkHostAndOrigin(o.guard, req.headers.host, origin);
    if (why) return refuse(req, reply, o.maxBodyBytes, { status: 403, message: `Forbidden: ${why}`, code: ErrorCode.ServerError, headers: {} });
    // A browser's request from an allowed origin: every answer, a refusal included, is one it may read.
    if (origin !== undefined) allowOrigin(reply.raw, origin);
    const claim = o.forwardClaim?.(req);
    const rateLater = claim !== undefined || req.method === 'POST';
    const r = authorizeRequest(o.auth, req, endpoint, rateLater, metadataPath);
    // Awaited only when it is a promise: without a token to verify or a shared counter it is not, and an
    // await on a plain value still costs a turn of the microtask queue on every request.
    const p = r instanceof Promise ? await r : r;
    if (isRefusal(p)) return refuse(req, reply, o.maxBodyBytes, p);
    req.principal = p;
    if (rateLater && claim !== 'proven') req.rateOwed = true;
    o.limits?.authenticated(socket);
    return undefined;
  };
}

/** The principal the front door put on a request of an MCP route. */
export function requestPrincipal(req: EdgeRequest): Principal {
  if (!req.principal) throw new Error(`no principal on ${req.method} ${req.url}: the route is not behind the front door`);
  return req.principal;
}

function refuse(req: EdgeRequest, reply: EdgeReply, maxBodyBytes: number, r: Refusal): EdgeReply {
  lingerAfterRefusal(req.raw, maxBodyBytes);
  // The body (if any) is never used: the connection cannot be reused, and must not be held.
  return sendError(reply, r.status, r.message, { code: r.code, headers: { ...r.headers, connection: 'close' }, data: r.data });
}
