import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors.js';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import { isRequest, type JsonRpcRequest, type RequestId } from '../jsonrpc/types.js';
import type { EndpointRouter } from '../router/index.js';
import type { ClientSession, SessionRegistry } from '../session/index.js';
import { isSupportedVersion } from '../session/index.js';
import type { EdgeAuth } from './authorize-request.js';
import { admitToSession, readClientMessages } from './accept-messages.js';
import { samePrincipal, type Principal } from '../auth/principal.js';
import type { Cluster } from '../cluster/cluster.js';
import { FORWARDED_HEADER } from '../cluster/tunnel.js';
import { principalOf, type SessionRecord } from '../session/index.js';
import { acceptsBoth, acceptsSse, isRefusal, replyError, sendError, sendRefusal } from './replies.js';
import type { GuardOptions } from './request-guard.js';
import type { SseHub } from './sse-connection.js';
import type { ConnectionLimits } from './connection-limits.js';
import { requestPrincipal } from './front-door.js';
import { StreamableSessionTransport, StreamConflictError, UnknownEventIdError } from './streamable-session-transport.js';

export interface EdgeContext {
  registry: SessionRegistry;
  /** Set when sessions are shared with other replicas (Redis). */
  cluster?: Cluster | undefined;
  auth: EdgeAuth;
  hub: SseHub;
  guard: GuardOptions;
  /** Connection caps and body timers (absent in tests that build the routes alone). */
  limits?: ConnectionLimits | undefined;
  responseMode: 'sse' | 'json';
  /** Client messages nesting deeper are refused with -32600. */
  maxJsonDepth?: number | undefined;
  resumable: boolean;
}

const SESSION_HEADER = 'mcp-session-id';

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Streamable HTTP (2025-03-26 … 2025-11-25) on one endpoint path: POST carries client messages, GET
 * opens the standalone stream or resumes one, DELETE ends the session.
 */
export function registerStreamableHttp(app: FastifyInstance, router: EndpointRouter, ctx: EdgeContext): void {
  const path = router.config.path;
  const transports = new WeakMap<ClientSession, StreamableSessionTransport>();

  const newTransport = (id: string, session: () => ClientSession) =>
    new StreamableSessionTransport({
      sessionId: id,
      hub: ctx.hub,
      events: ctx.registry.events,
      resumable: ctx.resumable,
      retryMs: 1000,
      protocolVersion: () => session().protocolVersion,
      onStreamsChanged: (d) => (d > 0 ? session().streamOpened() : session().streamClosed()),
    });

  /** Takes over a session whose owner is gone (Redis): rebuilt here from its record. */
  const restore = async (record: SessionRecord, principal: Principal): Promise<ClientSession | undefined> => {
    let session!: ClientSession;
    let transport!: StreamableSessionTransport;
    session = await ctx.registry.create('streamable-http', router, principal, (id) => (transport = newTransport(id, () => session)), record.id);
    transports.set(session, transport);
    try {
      await transport.continueFrom(ctx.registry.events);
      await session.restore(record);
      await ctx.cluster!.record(session.record());
      return session;
    } catch {
      await session.close('could not be taken over');
      return undefined;
    }
  };

  /**
   * The session named by the request, wherever it lives. Not here but in Redis: forwarded to its live
   * owner (then 'forwarded': the owner answers), or taken over when the owner is gone. Throws
   * SWB_STORE_UNAVAILABLE when the store cannot tell.
   */
  const locate = async (req: FastifyRequest, reply: FastifyReply, id: string, principal: Principal): Promise<ClientSession | 'forwarded' | undefined> => {
    const local = ctx.registry.get(id);
    if (local || !ctx.cluster) return local;
    const where = await ctx.cluster.locate(id, header(req, FORWARDED_HEADER) !== undefined);
    if (where.kind === 'forward') {
      // The owner's answer (possibly a stream) is piped through: not Fastify's to send.
      ctx.cluster.forward(where.owner, req.method, req.url, req.headers, typeof req.body === 'string' ? req.body : undefined, reply.hijack().raw);
      return 'forwarded';
    }
    if (where.kind !== 'restore') return undefined;
    const r = where.record;
    // Only a Streamable HTTP session on this endpoint, of this principal, whose upstream state can move.
    if (r.kind !== 'streamable-http' || r.endpoint !== path || !samePrincipal(principalOf(r), principal) || !r.movable) return undefined;
    if (!(await ctx.cluster.claim(id, where.owner))) return ctx.registry.get(id);
    return restore(r, principal);
  };

  /** The request's session, or undefined when the request has been answered (or forwarded). */
  const findSession = async (req: FastifyRequest, reply: FastifyReply, principal: Principal): Promise<ClientSession | undefined> => {
    const id = header(req, SESSION_HEADER);
    if (!id) {
      sendError(reply, 400, 'Bad Request: Mcp-Session-Id header is required', { code: ErrorCode.InvalidRequest });
      return undefined;
    }
    // A store that cannot be read proves nothing about the session: 503 and retry, never 404 (start over).
    const found = await locate(req, reply, id, principal).catch((err: GatewayError) => {
      sendError(reply, err.status ?? 503, err.message, { headers: err.status === 403 ? {} : { 'retry-after': '2' } });
      return 'forwarded' as const; // answered
    });
    if (found === 'forwarded') return undefined;
    const s = found;

    // Another principal's session is answered exactly like one that does not exist.
    if (!s || s.endpoint !== router || s.kind !== 'streamable-http' || !samePrincipal(s.principal, principal)) {
      sendError(reply, 404, 'Session not found: it ended or never existed; send initialize to start a new one', { code: ErrorCode.InvalidRequest });
      return undefined;
    }
    s.guard.refresh(principal);
    ctx.cluster?.touched(s.id);
    const version = header(req, 'mcp-protocol-version');
    if (version !== undefined && !isSupportedVersion(version)) {
      sendError(reply, 400, `Bad Request: unsupported MCP-Protocol-Version "${version.slice(0, 32)}"`, { code: ErrorCode.InvalidRequest });
      return undefined;
    }
    return s;
  };

  const post = async (req: FastifyRequest, reply: FastifyReply) => {
    const principal = requestPrincipal(req);
    if (!acceptsBoth(header(req, 'accept'))) {
      return sendError(reply, 406, 'Not Acceptable: the client must accept both application/json and text/event-stream');
    }
    const read = readClientMessages(req, ctx.maxJsonDepth);
    if (isRefusal(read)) return sendRefusal(reply, read);
    const { messages, batch } = read;
    const init = messages.find((m) => isRequest(m) && m.method === 'initialize') as JsonRpcRequest | undefined;
    if (init) {
      if (batch) return sendError(reply, 400, 'Invalid Request: initialize must be sent alone, not in a batch', { code: ErrorCode.InvalidRequest, id: init.id });
      if (header(req, SESSION_HEADER)) return sendError(reply, 400, 'Invalid Request: initialize starts a new session and must not carry Mcp-Session-Id', { code: ErrorCode.InvalidRequest, id: init.id });
      return initialize(init, reply, principal);
    }
    const session = await findSession(req, reply, principal);
    if (!session) return reply;
    const refused = admitToSession(ctx.auth, req, path, session, read);
    if (refused) return sendRefusal(reply, refused);
    const transport = transports.get(session)!;
    const ids: RequestId[] = [];
    for (const m of messages) {
      if (!isRequest(m)) continue;
      if (transport.hasPending(m.id) || ids.includes(m.id)) {
        return sendError(reply, 400, `Invalid Request: id ${JSON.stringify(m.id)} is already in use by a request in flight`, { code: ErrorCode.InvalidRequest, id: m.id });
      }
      ids.push(m.id);
    }
    const headers = { [SESSION_HEADER]: session.id };
    if (ids.length === 0) {
      reply.code(202).headers(headers).send();
    } else {
      // The answers go out as they come (an SSE stream, or one JSON body once all are in), written by
      // the session's transport: not Fastify's to send.
      transport.openPost(ids, reply.hijack().raw, headers, ctx.responseMode, batch);
    }
    for (const m of messages) session.handle(m);
    return reply;
  };

  const initialize = async (init: JsonRpcRequest, reply: FastifyReply, principal: Principal): Promise<FastifyReply> => {
    let session: ClientSession;
    let transport: StreamableSessionTransport | undefined;
    try {
      session = await ctx.registry.create('streamable-http', router, principal, (id) => (transport = newTransport(id, () => session)));
    } catch (err) {
      const e = err as GatewayError;
      return sendError(reply, e.status ?? 503, e.message, { id: init.id, headers: e.status === 403 ? {} : { 'retry-after': '5' } });
    }
    transports.set(session, transport!);
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
    if (ctx.cluster) {
      try {
        await ctx.cluster.record(session.record());
      } catch {
        // Without its record no other replica could serve this session: refuse it rather than half-work.
        void session.close('the session store is unreachable');
        return sendError(reply, 503, 'Service Unavailable: the session store is unreachable; retry shortly', { id: init.id, headers: { 'retry-after': '2' } });
      }
    }
    return reply.code(200).headers({ 'content-type': 'application/json', [SESSION_HEADER]: session.id }).send(JSON.stringify(response));
  };

  const get = async (req: FastifyRequest, reply: FastifyReply) => {
    const principal = requestPrincipal(req);
    if (!acceptsSse(header(req, 'accept'))) return sendError(reply, 406, 'Not Acceptable: a GET stream needs Accept: text/event-stream');
    const session = await findSession(req, reply, principal);
    if (!session) return reply;
    const transport = transports.get(session)!;
    const lastEventId = header(req, 'last-event-id');
    const headers = { [SESSION_HEADER]: session.id };
    // A stream the session's transport writes (a replay, then live events): not Fastify's to send.
    const res = reply.hijack().raw;
    try {
      if (lastEventId) await transport.resume(lastEventId, res, headers);
      else await transport.openStandalone(res, headers);
    } catch (err) {
      if (err instanceof StreamConflictError) replyError(res, 409, `Conflict: ${err.message}`);
      else if (err instanceof UnknownEventIdError) replyError(res, 400, `Bad Request: ${err.message}`, { code: ErrorCode.InvalidRequest });
      else if (err instanceof GatewayError) replyError(res, err.status, err.message, { headers: { 'retry-after': '2' } });
      else throw err;
    }
    return reply;
  };

  const del = async (req: FastifyRequest, reply: FastifyReply) => {
    const session = await findSession(req, reply, requestPrincipal(req));
    if (!session) return reply;
    await session.close('deleted by the client');
    return reply.code(200).header('content-type', 'application/json').send('{}');
  };

  const config = { endpoint: path };
  app.post(path, { config }, post);
  app.get(path, { config }, get);
  app.delete(path, { config }, del);
  app.route({
    method: ['PUT', 'PATCH'],
    url: path,
    config,
    handler: async (_req, reply) => sendError(reply, 405, 'Method Not Allowed: use POST, GET or DELETE', { headers: { allow: 'GET, POST, DELETE' } }),
  });
}
