import type { EdgeReply, EdgeRequest } from './edge-exchange.js';
import type { Principal } from '../auth/principal.js';
import { GatewayError } from '../errors.js';
import { isRequest, type JsonRpcMessage } from '../jsonrpc/types.js';
import { ModernError } from '../modern/modern-error.js';
import { readModernRequest, type ModernCall } from '../modern/modern-request.js';
import type { ForwardToReplica, ModernService } from '../modern/modern-service.js';
import type { Cluster } from '../cluster/cluster.js';
import type { EndpointRouter } from '../router/index.js';
import { insufficientScope, type EdgeAuth } from './authorize-request.js';
import { ModernReply } from './modern-reply.js';
import { auditsRefusal } from './refusal-audit.js';
import { sendError, sendRefusal, sessionRefusal } from './replies.js';
import type { SseHub } from './sse-connection.js';

/**
 * One 2026-07-28 POST on a Streamable HTTP endpoint: validated in the spec's order (each refusal with
 * its HTTP status and the request id), then served statelessly by the modern service. No session id
 * is read, minted or echoed. A notification is accepted with 202 and has nothing to act on over HTTP
 * (cancellation is closing the request's stream).
 */
export function serveModernPost(
  req: EdgeRequest,
  reply: EdgeReply,
  message: JsonRpcMessage,
  o: { router: EndpointRouter; principal: Principal; service: ModernService; hub: SseHub; auth: EdgeAuth; cluster?: Cluster | undefined },
): EdgeReply | Promise<EdgeReply> {
  if (!isRequest(message)) return reply.code(202).send();
  let call: ModernCall;
  try {
    call = readModernRequest(req.headers, message);
  } catch (err) {
    if (!(err instanceof ModernError)) throw err;
    // Through sendError, as every other refusal of the edge: counted (switchboard_http_refusals_total) and logged.
    return sendError(reply, err.status, err.message, { code: err.code, id: err.id, data: err.data });
  }
  let session;
  try {
    session = o.service.sessions.for(o.router, o.principal);
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    // As a refused 2025 session start: data.code and a Retry-After (the gateway is draining: retry elsewhere).
    const r = sessionRefusal(err, 5);
    return sendError(reply, r.status, r.message, { ...r.opts, id: call.id });
  }
  // Judged by this request's own token, not the standing's latest (another client of the subject may share it).
  const guard = session.guardFor(o.principal);
  // Judged by the tool a call runs (call_tool's, a rename's), as the policy stage will judge it.
  const judged = call.method === 'tools/call' && guard.tenant.hasScopedRules ? o.router.tools.judged(guard.tenant.name, call.params) : call.params;
  const missing = guard.missingScopes(call.method, judged);
  if (missing) {
    const refusal = { ...insufficientScope(o.auth, req, o.router.config.path, missing, o.router.config.path), id: call.id };
    // A retry answering a round of a call is none of its own (auditsRefusal): the call waits on for a retry
    // whose token has the scope. Asked once; a promise only when the shared store must be read.
    const audits = auditsRefusal(o.service, req, o.router.config.path, message);
    const refuse = (audited: boolean) => {
      if (audited) guard.refused(call.method, judged, `missing scope ${missing.join(' ')}`);
      return sendRefusal(reply, refusal);
    };
    return audits instanceof Promise ? audits.then(refuse) : refuse(audits);
  }
  const res = reply.hijack().raw;
  const out = new ModernReply(res, o.hub, call);
  const cluster = o.cluster;
  if (cluster?.forwarded(req)) out.holdForRelay();
  // A retry whose continuation another replica holds goes there (once: a forwarded request is not forwarded again).
  const forward: ForwardToReplica | undefined =
    cluster && !cluster.forwarded(req)
      ? async (replica) => {
          if (!(await cluster.reachable(replica))) return false;
          const body = typeof req.body === 'string' ? req.body : undefined;
          return (await cluster.forward(replica, { method: req.method, url: req.url, headers: req.headers, body }, () => res)) === 'relayed';
        }
      : undefined;
  // A new call is started synchronously (no promise to wait for); a retry may wait for its continuation.
  const served = o.service.serve(session, o.principal, call, out, forward);
  return served === undefined ? reply : served.then(() => reply);
}
