import type { ServerResponse } from 'node:http';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import type { EdgeReply, EdgeRequest } from './edge-exchange.js';
import { sendError } from './replies.js';
import { checkHostAndOrigin, type GuardOptions } from './request-guard.js';

/** What a browser's MCP client must read of an answer: the session it was given, why it was refused, when to retry. */
const EXPOSED = 'Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, Retry-After';
/** The request headers MCP clients send, for a preflight that names none it wants. */
const REQUEST_HEADERS = 'Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID';
/** A comma-separated list of header names (RFC 9110 tokens): anything else is not echoed into a header. */
const NAMES = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:[ \t]*,[ \t]*[!#$%&'*+.^_`|~0-9A-Za-z-]+)*$/;

/**
 * An answer to a request from an Origin the guard let through (server.allowedOrigins, or a loopback page
 * on a loopback gateway): the browser may read it, and the headers a client needs from it. Set on the
 * response itself, so that every answer carries them however it is written (Fastify's reply, a direct
 * post's, a stream written raw). No credentials mode: the gateway's clients send a bearer token, never cookies.
 */
export function allowOrigin(res: ServerResponse, origin: string): void {
  res.setHeader('access-control-allow-origin', origin);
  res.setHeader('vary', 'Origin');
  res.setHeader('access-control-expose-headers', EXPOSED);
}

/**
 * OPTIONS on an endpoint's path: a browser's CORS preflight, sent without credentials before the request
 * itself, so it is judged by the Host/Origin guard alone. An allowed origin is told the methods the path
 * serves (`methods`) and the request headers it asked for; any other gets 403 (the browser then sends nothing).
 */
export async function answerPreflight(req: EdgeRequest, reply: EdgeReply, guard: GuardOptions, methods: string): Promise<EdgeReply> {
  const h = req.headers;
  const origin = Array.isArray(h.origin) ? h.origin[0] : h.origin;
  const why = checkHostAndOrigin(guard, h.host, origin);
  if (why) return sendError(reply, 403, `Forbidden: ${why}`, { code: ErrorCode.ServerError });
  reply.header('allow', methods);
  if (origin !== undefined) {
    allowOrigin(reply.raw, origin);
    reply.headers(preflightHeaders(methods, h['access-control-request-headers'], REQUEST_HEADERS));
  }
  return reply.code(204).send();
}

/** A preflight's answer: the methods, the request headers it asked for (when they are header names, else `fallback`), for ten minutes. */
export function preflightHeaders(methods: string, asked: string | undefined, fallback: string): Record<string, string> {
  const names = asked?.trim();
  return {
    'access-control-allow-methods': methods,
    'access-control-allow-headers': names !== undefined && NAMES.test(names) ? names : fallback,
    'access-control-max-age': '600',
  };
}
