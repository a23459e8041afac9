import type { EdgeReply, EdgeRequest } from './edge-exchange.js';
import type { Principal } from '../auth/principal.js';
import { GatewayError } from '../errors.js';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import { isRequest, type JsonRpcMessage, type JsonRpcRequest, type RequestId } from '../jsonrpc/types.js';
import type { EndpointRouter } from '../router/index.js';
import type { ClientSession } from '../session/index.js';
import { admitToSession, chargeRate, deliverMessages, readClientMessages } from './accept-messages.js';
import type { EdgeContext } from './edge-context.js';
import { requestPrincipal } from './front-door.js';
import { acceptsBoth, acceptsSse, isRefusal, replyError, sendError, sendRefusal, sessionRefusal } from './replies.js';
import { header, SESSION_HEADER } from './request-header.js';
import { SessionLocator } from './session-locator.js';
import { StreamConflictError, UnknownEventIdError } from './streamable-session-transport.js';
import { StreamableSessions } from './streamable-sessions.js';
import { isModernHeader, isModernMessage } from '../modern/modern-request.js';
import type { ModernService } from '../modern/modern-service.js';
import { clipped } from '../observability/clipped.js';
import { serveModernPost } from './modern-endpoint.js';
import { refuseLegacyPost } from './legacy-refusal.js';
import { refuseRequestsOnly } from './rate-refused-answers.js';

/** GET and DELETE have no meaning in 2026-07-28 (no standalone stream, no session): a modern request's, or any on a modern-only endpoint. */
function modernNotAllowed(reply: EdgeReply): EdgeReply {
  return sendError(reply, 405, 'Method Not Allowed: 2026-07-28 uses POST only (subscriptions/listen replaces the GET stream)', { headers: { allow: 'POST' } });
}

/**
 * The refusal of an id already in use, quoting it cut: the message is logged too ("request refused"), and a
 * string id is the client's, of any length up to the body limit (the response's `id` still echoes it whole).
 */
function idInUse(id: RequestId): string {
  return `Invalid Request: id ${JSON.stringify(typeof id === 'string' ? clipped(id, 64) : id)} is already in use by a request in flight`;
}

/**
 * The Streamable HTTP handlers of one endpoint: POST carries client messages (or initialize), GET
 * opens the standalone stream or resumes one, DELETE ends the session.
 */
export class StreamableHttpEndpoint {
  readonly #router: EndpointRouter;
  readonly #ctx: EdgeContext;
  readonly #sessions: StreamableSessions;
  readonly #locator: SessionLocator;
  /**
   * The modern era, while the endpoint serves it (a reload may change its eras). A legacy-only endpoint
   * answers modern requests exactly as a legacy server would, so dual-era clients fall back.
   */
  get #modern(): ModernService | undefined {
    return this.#router.config.eras.includes('modern') ? this.#ctx.modern : undefined;
  }

  /** Whether the endpoint serves the 2025 era (sessions); a modern-only one answers it as a 2026-07-28-only server. */
  get #legacy(): boolean {
    return this.#router.config.eras.includes('legacy');
  }

  constructor(router: EndpointRouter, ctx: EdgeContext) {
    this.#router = router;
    this.#ctx = ctx;
    this.#sessions = new StreamableSessions(router, ctx);
    this.#locator = new SessionLocator(router, ctx, this.#sessions);
  }

  async post(req: EdgeRequest, reply: EdgeReply): Promise<EdgeReply> {
    const principal = requestPrincipal(req);
    if (!acceptsBoth(header(req, 'accept'))) {
      return sendError(reply, 406, 'Not Acceptable: the client must accept both application/json and text/event-stream');
    }
    const read = readClientMessages(req, this.#ctx);
    if (isRefusal(read)) return sendRefusal(reply, read);
    const { messages, batch } = read;
    // Before anything acts on them (a session located, forwarded or taken over, an upstream asked).
    const charged = chargeRate(this.#ctx, this.#router, req, messages);
    const overRate = charged instanceof Promise ? await charged : charged;
    if (overRate) return batch && (await refuseRequestsOnly(this.#ctx, this.#router, req, reply, { id: header(req, SESSION_HEADER), kind: 'streamable-http' }, messages, overRate)) ? reply : sendRefusal(reply, overRate);
    // One message (nearly every POST) is looked at without a callback per element.
    const single = batch ? undefined : messages[0];
    const first = single === undefined ? messages.find(isRequest) : isRequest(single) ? single : undefined;
    if (this.#modern) {
      const modern = single === undefined ? messages.some((m) => isModernMessage(req.headers, m)) : isModernMessage(req.headers, single);
      if (modern && batch) return sendError(reply, 400, 'Invalid Request: 2026-07-28 has no batches; send one message per POST', { code: ErrorCode.InvalidRequest, id: first?.id ?? null });
      if (modern) {
        const tracing = this.#ctx.tracing;
        if (tracing?.enabled) return tracing.withHeaders(req.headers, () => this.#modernPost(req, reply, messages[0]!, principal));
        return this.#modernPost(req, reply, messages[0]!, principal);
      }
    }
    if (!this.#legacy) return refuseLegacyPost(req, reply, messages, batch);
    const init = messages.find((m) => isRequest(m) && m.method === 'initialize') as JsonRpcRequest | undefined;
    if (init) {
      if (batch) return sendError(reply, 400, 'Invalid Request: initialize must be sent alone, not in a batch', { code: ErrorCode.InvalidRequest, id: init.id });
      if (header(req, SESSION_HEADER)) return sendError(reply, 400, 'Invalid Request: initialize starts a new session and must not carry Mcp-Session-Id', { code: ErrorCode.InvalidRequest, id: init.id });
      return this.#initialize(init, reply, principal);
    }
    const session = await this.#locator.find(req, reply, principal, first?.id ?? null);
    if (!session) return reply;
    const refused = admitToSession(this.#ctx.auth, req, this.#router.config.path, session, read);
    if (refused) return sendRefusal(reply, refused);
    const transport = this.#sessions.transportOf(session);
    const ids: RequestId[] = [];
    // A batch's ids are told apart by a set: looked up in the list, a batch of n requests cost n²/2
    // comparisons (a 4 MiB batch of 90,000 pings held the event loop for seconds).
    const seen = batch ? new Set<RequestId>() : undefined;
    for (const m of messages) {
      if (!isRequest(m)) continue;
      if (transport.hasPending(m.id) || seen?.has(m.id)) {
        return sendError(reply, 400, idInUse(m.id), { code: ErrorCode.InvalidRequest, id: m.id });
      }
      ids.push(m.id);
      seen?.add(m.id);
    }
    const headers = { [SESSION_HEADER]: session.id };
    if (ids.length === 0) {
      reply.code(202).headers(headers).send();
    } else {
      // The answers go out as they come (an SSE stream, or one JSON body once all are in), written by
      // the session's transport: not Fastify's to send.
      transport.openPost(ids, reply.hijack().raw, headers, this.#ctx.responseMode, batch);
    }
    deliverMessages(this.#ctx.tracing, req, session, messages);
    return reply;
  }

  #modernPost(req: EdgeRequest, reply: EdgeReply, message: JsonRpcMessage, principal: Principal): EdgeReply | Promise<EdgeReply> {
    return serveModernPost(req, reply, message, { router: this.#router, principal, service: this.#modern!, hub: this.#ctx.hub, auth: this.#ctx.auth, cluster: this.#ctx.cluster });
  }

  async get(req: EdgeRequest, reply: EdgeReply): Promise<EdgeReply> {
    if (!this.#legacy || (this.#modern && isModernHeader(req.headers))) return modernNotAllowed(reply);
    const principal = requestPrincipal(req);
    if (!acceptsSse(header(req, 'accept'))) return sendError(reply, 406, 'Not Acceptable: a GET stream needs Accept: text/event-stream');
    const session = await this.#locator.find(req, reply, principal);
    if (!session) return reply;
    const transport = this.#sessions.transportOf(session);
    const lastEventId = header(req, 'last-event-id');
    const headers = { [SESSION_HEADER]: session.id };
    // A stream the session's transport writes (a replay, then live events): not Fastify's to send. It ends when
    // this GET's token expires (the session stays: its client opens the GET again with a fresh token).
    const res = reply.hijack().raw;
    try {
      if (lastEventId) await transport.resume(lastEventId, res, headers, principal.expiresAt);
      else await transport.openStandalone(res, headers, principal.expiresAt);
    } catch (err) {
      if (err instanceof StreamConflictError) replyError(res, 409, `Conflict: ${err.message}`, {}, reply.refused);
      else if (err instanceof UnknownEventIdError) replyError(res, 400, `Bad Request: ${err.message}`, { code: ErrorCode.InvalidRequest }, reply.refused);
      else if (err instanceof GatewayError) replyError(res, err.status, err.message, { headers: { 'retry-after': '2' } }, reply.refused);
      else throw err;
    }
    return reply;
  }

  async delete(req: EdgeRequest, reply: EdgeReply): Promise<EdgeReply> {
    if (!this.#legacy || (this.#modern && isModernHeader(req.headers))) return modernNotAllowed(reply);
    const session = await this.#locator.find(req, reply, requestPrincipal(req));
    if (!session) return reply;
    await session.close('deleted by the client');
    return reply.code(200).header('content-type', 'application/json').send('{}');
  }

  async #initialize(init: JsonRpcRequest, reply: EdgeReply, principal: Principal): Promise<EdgeReply> {
    // The store answers nothing (its connection down, or a heartbeat left unanswered): the session's
    // record could not be written, so it is refused now, before its upstreams start, not after a
    // per-session instance was started and the record's write had waited out its timeout.
    if (this.#ctx.cluster && !this.#ctx.cluster.answering) return sendError(reply, 503, 'Service Unavailable: the session store is unreachable; retry shortly', { id: init.id, headers: { 'retry-after': '2' } });
    let session: ClientSession;
    try {
      session = await this.#sessions.create(principal);
    } catch (err) {
      const r = sessionRefusal(err, 5);
      return sendError(reply, r.status, r.message, { ...r.opts, id: init.id });
    }
    // A client that gives up before the answer would leave a session nobody knows the id of.
    const res = reply.raw;
    const abandoned = () => void session.close('the client left during initialize');
    res.once('close', abandoned);
    const response = await session.initialize(init);
    res.off('close', abandoned);
    if (res.destroyed) {
      void session.close('the client left during initialize');
      return reply;
    }
    if ('error' in response) {
      void session.close('initialize failed');
      return reply.code(200).header('content-type', 'application/json').send(JSON.stringify(response));
    }
    if (this.#ctx.cluster) {
      try {
        await this.#ctx.cluster.open(session.record());
      } catch {
        // Without its record no other replica could serve this session: refuse it rather than half-work.
        void session.close('the session store is unreachable');
        return sendError(reply, 503, 'Service Unavailable: the session store is unreachable; retry shortly', { id: init.id, headers: { 'retry-after': '2' } });
      }
    }
    return reply.code(200).headers({ 'content-type': 'application/json', [SESSION_HEADER]: session.id }).send(JSON.stringify(response));
  }
}
