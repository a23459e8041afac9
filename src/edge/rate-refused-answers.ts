import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { samePrincipal } from '../auth/principal.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import { isRequest, type JsonRpcMessage } from '../jsonrpc/types.js';
import type { EndpointRouter } from '../router/index.js';
import { deliverMessages } from './accept-messages.js';
import type { EdgeContext } from './edge-context.js';
import type { EdgeReply, EdgeRequest } from './edge-exchange.js';
import type { Refusal } from './replies.js';

/**
 * A 2025-03-26 batch the tenant's request rate refused, when it also carries the client's answers to
 * questions the gateway put to it (sampling, roots, elicitation) or its notifications (a cancellation,
 * roots/list_changed): neither takes a token, and neither is refused for the requests around them, so
 * they are passed on to their session in the order sent (held here, or forwarded to its owner, which
 * answers nothing back: a POST of answers and notifications alone gets a bare 202), and only the
 * requests are refused: the 429 (its Retry-After kept) answers each of them in a batch response.
 * Before, the whole batch was refused and the answers thrown away: the call that asked waited until it
 * failed (and, until 2026-12-06, a cancellation: the call it cancelled went on). Returns false when the
 * batch holds only requests (the plain refusal then applies).
 */
export async function refuseRequestsOnly(ctx: EdgeContext, router: EndpointRouter, req: EdgeRequest, reply: EdgeReply, to: AnsweredSession, messages: readonly JsonRpcMessage[], refusal: Refusal): Promise<boolean> {
  const passed = messages.filter((m) => !isRequest(m));
  if (passed.length === 0) return false;
  await passOn(ctx, router, req, to, passed);
  const errors = messages.filter(isRequest).map((m) => new JsonRpcError(refusal.code, refusal.message, refusal.data).toResponse(m.id));
  reply.refused?.(refusal.status, refusal.code, refusal.message);
  reply.code(refusal.status).headers({ 'content-type': 'application/json', ...refusal.headers }).send(JSON.stringify(errors));
  return true;
}

/** The session a POST names (Mcp-Session-Id, or a legacy POST's ?sessionId=), of its transport. */
export interface AnsweredSession {
  id: string | undefined;
  kind: 'streamable-http' | 'sse';
}

/** The answers and notifications to the session the POST names: delivered here, or forwarded to its live owner. */
async function passOn(ctx: EdgeContext, router: EndpointRouter, req: EdgeRequest, { id, kind }: AnsweredSession, answers: JsonRpcMessage[]): Promise<void> {
  if (id === undefined) return;
  const local = ctx.registry.get(id);
  if (local) {
    // Only to a session this client may speak for, as any POST naming it (else it is some other's).
    if (local.endpoint === router && local.kind === kind && samePrincipal(local.principal, req.principal!)) deliverMessages(ctx.tracing, req, local, answers);
    return;
  }
  const cluster = ctx.cluster;
  if (!cluster || cluster.forwarded(req)) return;
  try {
    const where = await cluster.locate(id, false);
    if (where.kind !== 'forward') return; // an owner gone took the question with it
    // The owner checks the session and principal as for any forward; its 202 is not this client's answer.
    await cluster.forward(where.owner, { method: 'POST', url: req.url, headers: req.headers, body: JSON.stringify(answers) }, detached);
  } catch {
    // The store or the owner cannot be reached: the answers are lost as the whole batch was before.
  }
}

/** A response no client reads (no socket): what the owner answers to a POST of answers alone is dropped. */
function detached(): ServerResponse {
  return new ServerResponse(new IncomingMessage(new Socket()));
}
