import type { EdgeReply, EdgeRequest } from './edge-exchange.js';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import type { EndpointRouter } from '../router/index.js';
import { LegacySseTransport } from './legacy-sse-transport.js';
import { isRefusal, replyError, sendError, sendRefusal, sessionRefusal } from './replies.js';
import { admitToSession, chargeRate, deliverMessages, readClientMessages } from './accept-messages.js';
import { requestPrincipal } from './front-door.js';
import { samePrincipal } from '../auth/principal.js';
import { LEGACY_METADATA } from './authorize-request.js';
import { refuseRequestsOnly } from './rate-refused-answers.js';
import type { EdgeContext } from './edge-context.js';

/** The answer to every accepted POST of this transport: its length known, so it leaves unchunked. */
const ACCEPTED_HEADERS = { 'content-type': 'text/plain', 'content-length': '8' };

/** The session a POST names in its query (`?sessionId=`); none when it names more than one. */
function sessionIdOf(url: string): string | undefined {
  const q = url.indexOf('?');
  if (q < 0) return undefined;
  const ids = new URLSearchParams(url.slice(q + 1)).getAll('sessionId');
  return ids.length === 1 ? ids[0] : undefined;
}

/**
 * The deprecated HTTP+SSE transport (2024-11-05), still what many clients speak: GET on the SSE path
 * opens the session's only stream, whose first event names the URL to POST messages to (the edge plugin
 * routes both paths here).
 */
export async function openStream(req: EdgeRequest, reply: EdgeReply, router: EndpointRouter, ctx: EdgeContext, messagesPath: string): Promise<void> {
  const principal = requestPrincipal(req);
  // The response is the session's stream, written by its transport: not Fastify's to send.
  const res = reply.hijack().raw;
  // Refused before the stream opens, as an initialize is: its record could not be written, and a stream
  // already open can only be ended, which tells the client nothing of retrying.
  if (ctx.cluster && !ctx.cluster.answering) return replyError(res, 503, 'Service Unavailable: the session store is unreachable; retry shortly', { headers: { 'retry-after': '2' } }, reply.refused);
  try {
    const session = await ctx.registry.create('sse', router, principal, (id) => {
      // Ended when this GET's token expires, and the session with it (it lives on its stream): its client
      // connects and initializes again with a fresh token (before 2026-12-07 it went on for as long as the connection held).
      const conn = ctx.hub.open(res, {}, true, principal.expiresAt);
      // Under the public URL's path: a proxy serving the gateway under a prefix takes only that back to it.
      return new LegacySseTransport(conn, `${ctx.basePath ?? ''}${messagesPath}?sessionId=${encodeURIComponent(id)}`);
    });
    // The client left while the session was made: its stream closed at once and ended the session,
    // which a record written now would outlive (kept and re-published by this replica for ever).
    if (session.state === 'SHUTDOWN') return;
    // The session lives exactly as long as its stream: never idle while it is open.
    session.activity.streamOpened();
    // Recorded so that POSTs landing on another replica are forwarded here.
    ctx.cluster?.open(session.record()).catch(() => void session.close('the session store is unreachable'));
  } catch (err) {
    const r = sessionRefusal(err, 5);
    replyError(res, r.status, r.message, r.opts, reply.refused);
  }
}

export async function postMessages(req: EdgeRequest, reply: EdgeReply, router: EndpointRouter, ctx: EdgeContext): Promise<EdgeReply> {
  const principal = requestPrincipal(req);
  const id = sessionIdOf(req.url);
  if (!id) return sendError(reply, 400, 'Bad Request: the sessionId query parameter is required', { code: ErrorCode.InvalidRequest });
  const read = readClientMessages(req, ctx);
  if (isRefusal(read)) return sendRefusal(reply, read);
  // The tenant's rate, a token per request of the body, before the message is forwarded or delivered.
  const charged = chargeRate(ctx, router, req, read.messages);
  const overRate = charged instanceof Promise ? await charged : charged;
  if (overRate) return read.batch && (await refuseRequestsOnly(ctx, router, req, reply, { id, kind: 'sse' }, read.messages, overRate)) ? reply : sendRefusal(reply, overRate);
  const session = ctx.registry.get(id);
  if (!session && ctx.cluster && !ctx.cluster.forwarded(req)) {
    // The stream is open on another replica: the message goes there.
    let where;
    try {
      where = await ctx.cluster.locate(id, false);
    } catch (err) {
      // The store cannot tell where the stream is: retry, the session may be alive (a 404 ends it).
      return sendError(reply, 503, `Service Unavailable: ${(err as Error).message}`, { headers: { 'retry-after': '2' } });
    }
    // An owner found gone: the stream died with it, so the session is not found (below).
    const body = typeof req.body === 'string' ? req.body : undefined;
    if (where.kind === 'forward' && (await ctx.cluster.forward(where.owner, { method: req.method, url: req.url, headers: req.headers, body }, () => reply.hijack().raw)) === 'relayed') return reply;
  }
  if (!session || session.kind !== 'sse' || session.endpoint !== router || !samePrincipal(session.principal, principal)) {
    return sendError(reply, 404, 'Session not found: open a new stream on the SSE path', { code: ErrorCode.InvalidRequest });
  }
  session.guard.refresh(principal);
  // A step-up challenge names the metadata that covers this transport's paths (LEGACY_METADATA).
  const refused = admitToSession(ctx.auth, req, LEGACY_METADATA, session, read);
  if (refused) return sendRefusal(reply, refused);
  // Written raw: one 202 per message is this transport's hot path, and Fastify's reply costs more than it.
  // With its length given it goes out in one buffer, not chunked (size line, text, terminating chunk).
  reply.hijack().raw.writeHead(202, ACCEPTED_HEADERS).end('Accepted');
  deliverMessages(ctx.tracing, req, session, read.messages);
  return reply;
}
