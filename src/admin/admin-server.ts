import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import type { Logger } from '../observability/logger.js';
import { refuseAdmin } from './admin-auth.js';
import type { AdminTarget } from './admin-target.js';
import { OPENAPI } from './openapi.js';

function fail(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply.code(status).send({ error: { code, message } });
}

/** The routes, every one behind the admin authentication hook. */
function routes(app: FastifyInstance, t: AdminTarget): void {
  app.get('/openapi.json', async () => OPENAPI);
  app.get('/sessions', async () => ({ items: await t.sessions() }));
  app.delete<{ Params: { id: string } }>('/sessions/:id', async (req, reply) =>
    (await t.endSession(req.params.id)) ? reply.code(204).send() : fail(reply, 404, 'not_found', `no session "${req.params.id}" on replica ${t.replica}`),
  );
  app.get('/upstreams', async () => ({ items: t.upstreams() }));
  app.post<{ Params: { name: string } }>('/upstreams/:name/restart', async (req, reply) => {
    const done = await t.restartUpstream(req.params.name);
    return done ?? fail(reply, 404, 'not_found', `no upstream "${req.params.name}"`);
  });
  app.get('/pins', async (_req, reply) => {
    const items = await t.pins();
    return items ? { items } : fail(reply, 404, 'pinning_off', 'tool pinning is off for every upstream');
  });
  app.post<{ Params: { upstream: string }; Body: unknown }>('/pins/:upstream/approve', async (req, reply) => {
    const tools = (req.body as { tools?: unknown } | null)?.tools;
    const valid = Array.isArray(tools) && tools.length > 0 && tools.every((x) => typeof x?.tool === 'string' && typeof x?.hash === 'string');
    if (!valid) return fail(reply, 400, 'bad_request', 'the body must be {"tools": [{"tool": NAME, "hash": PENDING_HASH}, ...]} (the hash you reviewed, from GET /pins)');
    const items = await t.approvePins(req.params.upstream, tools as Array<{ tool: string; hash: string }>);
    return items ? { items } : fail(reply, 404, 'not_found', `no pinned upstream "${req.params.upstream}"`);
  });
  app.get('/tenants', async () => ({ items: t.tenants() }));
  app.get('/config', async () => t.config());
  app.post('/reload', async () => t.reload());
}

/** The admin API as a Fastify instance of its own (not listening): its own port, never the MCP one. */
export async function buildAdminServer(target: AdminTarget, logger: Logger): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, bodyLimit: 64 * 1024 });
  const log = logger.child({ component: 'admin' });
  app.addHook('onRequest', async (req, reply) => {
    const refusal = await refuseAdmin(req.headers.authorization, target.credentials());
    if (!refusal) return;
    log.warn({ method: req.method, url: req.url, status: refusal.status }, `admin API request refused: ${refusal.message}`);
    const headers = refusal.status === 401 ? { 'www-authenticate': 'Bearer realm="switchboard-admin"' } : {};
    return reply.code(refusal.status).headers(headers).send({ error: { code: refusal.status === 401 ? 'unauthorized' : 'forbidden', message: refusal.message } });
  });
  app.setErrorHandler((err: Error & { statusCode?: number }, _req, reply) => {
    if (err.statusCode && err.statusCode < 500) return fail(reply, err.statusCode, 'bad_request', err.message);
    log.error({ err }, 'admin API route failed');
    return fail(reply, 500, 'internal', err.message);
  });
  routes(app, target);
  await app.ready();
  return app;
}

/** Starts the admin API on host:port; resolves with it and its URL. */
export async function startAdminServer(target: AdminTarget, logger: Logger, host: string, port: number): Promise<{ app: FastifyInstance; url: string }> {
  const app = await buildAdminServer(target, logger);
  await app.listen({ host, port });
  const a = app.server.address() as { address: string; port: number };
  return { app, url: `http://${a.address.includes(':') ? `[${a.address}]` : a.address}:${a.port}` };
}
