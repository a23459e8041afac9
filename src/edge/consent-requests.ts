import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { page } from './consent-pages.js';

/** The most a consent route reads of a body: the confirmation's form is two short fields; the others take none. */
export const CONSENT_BODY_LIMIT = 16_384;

/**
 * The consent routes' body parsers, in their own scope: the confirmation's form, and any other type read
 * (bounded) and left unused. Fastify's defaults answered a DELETE /oauth/links/<upstream> that came with
 * `Content-Type: application/json` and no body (as some HTTP clients send it) with a framework 400, and the
 * link stayed; a JSON or XML POST to /oauth/start got Fastify's own error shape.
 */
export function consentBodies(scope: FastifyInstance): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: CONSENT_BODY_LIMIT }, (_req, body, done) => done(null, new URLSearchParams(body as string)));
  scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: CONSENT_BODY_LIMIT }, (_req, body, done) => done(null, body));
}

/**
 * The consent routes' answer to what Fastify refuses before a route runs (a body too large) and to a
 * route's unexpected error: a browser's route a page, /oauth/links the JSON its answers are; a status of
 * its own, never the error's stack or (for a 500) its message. The log line names no URL: a callback's
 * query carries its authorization code and state.
 */
export function consentErrorHandler(err: FastifyError, req: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
  if (reply.raw.headersSent) return void reply.raw.end();
  const route = req.routeOptions.url ?? '';
  const status = err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
  let message: string;
  if (status === 500) {
    req.log.error({ err, reqId: req.id, route }, 'consent route failed');
    message = 'The gateway could not answer this request. Try again shortly; if it persists, tell your administrator.';
  } else {
    message = status === 413 ? `The request's body exceeds the consent routes' limit of ${CONSENT_BODY_LIMIT} bytes.` : `The request is malformed: ${err.message}.`;
    req.log.info({ route, status, code: err.code }, `consent route refused a request: ${message}`);
  }
  if (route.startsWith('/oauth/links')) return reply.code(status).header('cache-control', 'no-store').send({ error: message });
  return page(reply, status, status === 500 ? 'Try again shortly' : 'Not linked', message);
}
