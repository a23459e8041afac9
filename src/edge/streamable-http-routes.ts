import type { FastifyInstance } from 'fastify';
import type { EndpointRouter } from '../router/index.js';
import type { EdgeContext } from './edge-context.js';
import { sendError } from './replies.js';
import { StreamableHttpEndpoint } from './streamable-http-endpoint.js';

/**
 * Streamable HTTP (2025-03-26 … 2025-11-25) on one endpoint path: POST carries client messages, GET
 * opens the standalone stream or resumes one, DELETE ends the session.
 */
export function registerStreamableHttp(app: FastifyInstance, router: EndpointRouter, ctx: EdgeContext): void {
  const path = router.config.path;
  const endpoint = new StreamableHttpEndpoint(router, ctx);
  const config = { endpoint: path };
  app.post(path, { config }, (req, reply) => endpoint.post(req, reply));
  app.get(path, { config }, (req, reply) => endpoint.get(req, reply));
  app.delete(path, { config }, (req, reply) => endpoint.delete(req, reply));
  app.route({
    method: ['PUT', 'PATCH'],
    url: path,
    config,
    handler: async (_req, reply) => sendError(reply, 405, 'Method Not Allowed: use POST, GET or DELETE', { headers: { allow: 'GET, POST, DELETE' } }),
  });
}
