import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from '../observability/logger.js';
import { ConnectionCap } from '../listener/connection-cap.js';
import { attachEveryServer } from '../listener/fastify-servers.js';
import { httpDeadlines } from '../listener/http-deadlines.js';
import { PipelinedTurns } from '../listener/pipelined-turns.js';
import { refusePlacement, refuseWith, type AdminRefusal } from './admin-auth.js';
import { isLoopbackName, refuseCrossSite } from './admin-origin.js';
import { BoundedWarnings } from '../observability/bounded-warnings.js';
import { AdminEvents } from './admin-events.js';
import type { AdminTarget, LinkFilter } from './admin-target.js';
import { loadConsoleAssets, SECURITY_HEADERS, type Asset } from './console-assets.js';
import { OPENAPI } from './openapi.js';
import { linkKey, pageOf, pinKey, readPage, sessionKey } from './paging.js';

function fail(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply.code(status).send({ error: { code, message } });
}

type Handler = (t: AdminTarget, req: FastifyRequest<{ Params: Record<string, string>; Body: unknown }>, reply: FastifyReply, events: AdminEvents) => Promise<unknown>;

/** Every route, every one behind the admin authentication hook: a table, so the OpenAPI test can hold it to the document. */
export const ADMIN_ROUTES: ReadonlyArray<{ method: 'GET' | 'POST' | 'DELETE'; url: string; handler: Handler }> = [
  { method: 'GET', url: '/openapi.json', handler: async () => OPENAPI },
  { method: 'GET', url: '/events', handler: async (_t, req, reply, events) => events.open(req, reply) },
  {
    method: 'GET',
    url: '/sessions',
    handler: async (t, req, reply) => {
      const page = readPage(req.query, 'sessions');
      return typeof page === 'string' ? fail(reply, 400, 'bad_request', page) : pageOf(await t.sessions(page), sessionKey, page, 'sessions');
    },
  },
  {
    method: 'DELETE',
    url: '/sessions/:id',
    handler: async (t, req, reply) => (await t.endSession(req.params.id!)) ?? fail(reply, 404, 'not_found', `no session "${req.params.id}" on replica ${t.replica} (nor in the cluster's store, where Redis is on)`),
  },
  { method: 'GET', url: '/upstreams', handler: async (t) => ({ items: await t.upstreams() }) },
  {
    method: 'POST',
    url: '/upstreams/:name/restart',
    handler: async (t, req, reply) => (await t.restartUpstream(req.params.name!)) ?? fail(reply, 404, 'not_found', `no upstream "${req.params.name}"`),
  },
  {
    method: 'GET',
    url: '/pins',
    handler: async (t, req, reply) => {
      const page = readPage(req.query, 'pins');
      if (typeof page === 'string') return fail(reply, 400, 'bad_request', page);
      const items = await t.pins(page);
      return items ? pageOf(items, pinKey, page, 'pins') : fail(reply, 404, 'pinning_off', 'tool pinning is off for every upstream');
    },
  },
  { method: 'POST', url: '/pins/:upstream/approve', handler: (t, req, reply) => decide(t, req, reply, 'approve') },
  { method: 'POST', url: '/pins/:upstream/reject', handler: (t, req, reply) => decide(t, req, reply, 'reject') },
  { method: 'GET', url: '/tenants', handler: async (t) => ({ items: await t.tenants() }) },
  {
    method: 'GET',
    url: '/links',
    handler: async (t, req, reply) => {
      const filter = linkFilter(req);
      const page = readPage(req.query, 'links');
      if (typeof filter === 'string' || typeof page === 'string') return fail(reply, 400, 'bad_request', typeof filter === 'string' ? filter : (page as string));
      const items = await t.links(filter, page);
      return items ? pageOf(items, linkKey, page, 'links') : fail(reply, 404, 'vault_off', 'no vault is configured (vault.key): no user links are kept');
    },
  },
  {
    method: 'DELETE',
    url: '/links/:upstream',
    handler: async (t, req, reply) => {
      const filter = linkFilter(req);
      if (typeof filter === 'string') return fail(reply, 400, 'bad_request', filter);
      const subject = filter.subject;
      if (subject === undefined) return fail(reply, 400, 'bad_request', 'name the user: ?subject=SUBJECT (and issuer=, tenant= when subjects repeat across them)');
      const items = await t.revokeLinks({ ...filter, subject, upstream: req.params.upstream! });
      if (!items) return fail(reply, 404, 'vault_off', 'no vault is configured (vault.key): no user links are kept');
      return items.length > 0 ? { items } : fail(reply, 404, 'not_found', `no link of "${subject}" to upstream "${req.params.upstream}"`);
    },
  },
  { method: 'GET', url: '/config', handler: async (t) => t.config() },
  { method: 'POST', url: '/reload', handler: async (t) => t.reload() },
];

/**
 * The links filter of the query, or why it cannot be read. A filter given twice (?tenant=a&tenant=b) or
 * empty (?tenant=, a script's unset variable; no tenant, issuer or subject is empty) is refused: read as
 * absent, it widened what it was meant to narrow, and a revocation reached the subject's links in every tenant.
 */
function linkFilter(req: FastifyRequest<{ Params: Record<string, string>; Body: unknown }>): LinkFilter | string {
  const q = (req.query ?? {}) as Record<string, unknown>;
  const repeated = ['issuer', 'subject', 'tenant', 'upstream'].find((k) => Array.isArray(q[k]));
  if (repeated !== undefined) return `?${repeated}= is given more than once: name one ${repeated} per request`;
  const empty = ['issuer', 'subject', 'tenant', 'upstream'].find((k) => q[k] === '');
  if (empty !== undefined) return `?${empty}= is empty: name the ${empty}, or leave the filter out`;
  const one = (k: string) => (typeof q[k] === 'string' ? q[k] : undefined);
  return { issuer: one('issuer'), subject: one('subject'), tenant: one('tenant'), upstream: one('upstream') };
}

/** Approve or reject: both take the hashes the operator reviewed, so a definition that changed meanwhile is left alone. */
async function decide(t: AdminTarget, req: FastifyRequest<{ Params: Record<string, string>; Body: unknown }>, reply: FastifyReply, how: 'approve' | 'reject'): Promise<unknown> {
  const tools = (req.body as { tools?: unknown } | null)?.tools;
  const valid = Array.isArray(tools) && tools.length > 0 && tools.every((x) => typeof x?.tool === 'string' && typeof x?.hash === 'string');
  if (!valid) return fail(reply, 400, 'bad_request', 'the body must be {"tools": [{"tool": NAME, "hash": PENDING_HASH}, ...]} (the hash you reviewed, from GET /pins)');
  const list = tools as Array<{ tool: string; hash: string }>;
  const items = how === 'approve' ? await t.approvePins(req.params.upstream!, list) : await t.rejectPins(req.params.upstream!, list);
  return items ? { items } : fail(reply, 404, 'not_found', `no pinned upstream "${req.params.upstream}"`);
}

/** The console's page and files: public (they hold no data; everything they show comes from the API). */
function isConsoleFile(method: string, url: string): boolean {
  return (method === 'GET' || method === 'HEAD') && (url === '/' || url.startsWith('/console/'));
}

function serveAsset(asset: Asset | undefined, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (!asset) return fail(reply, 404, 'not_found', 'no such console file');
  // Revalidated each time (a 304 costs a round trip, not the file): an upgrade never mixes versions.
  reply.headers({ 'content-type': asset.type, etag: asset.etag, 'cache-control': 'no-cache' });
  return req.headers['if-none-match'] === asset.etag ? reply.code(304).send() : reply.send(asset.body);
}

/**
 * What the router refuses before any route or hook runs (a path that is no URL, a parameter over its
 * length), in the API's error shape: Fastify's own ({message, error, statusCode}) is read by no client
 * of this API. The path is not echoed (it may be long).
 */
function frameworkErrors(err: Error & { code?: string }, _req: FastifyRequest, reply: FastifyReply): void {
  // Answered before any hook, so the onSend hook that gives every other answer these does not run.
  reply.headers({ ...SECURITY_HEADERS, 'cache-control': 'no-store' });
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') void fail(reply, 414, 'uri_too_long', 'a path parameter is longer than 100 characters');
  else void fail(reply, 400, 'bad_request', err.code === 'FST_ERR_BAD_URL' ? 'the path is not a valid URL (a malformed percent-escape)' : err.message);
}

/** How the admin listener runs (from the config; defaults for tests that build it alone). */
export interface AdminListenerOptions {
  /** The console stream's keep-alive comment interval (server.keepAliveMs). */
  keepAliveMs?: number;
  /** Open connections at most (admin.maxConnections); more are closed at accept. */
  maxConnections?: number;
  /** Complete request headers within this long of the accept (server.headersTimeoutMs). */
  headersTimeoutMs?: number;
  /** The whole request, headers and body, within this long (server.bodyTimeoutMs); responses (the console's stream) are not limited. */
  requestTimeoutMs?: number;
}

/**
 * A cap of its own: its callers are a few operators, consoles and scripts (see ConnectionCap). Counted
 * over the server for ::1 too, which Fastify opens once it listens on `localhost`.
 */
function capConnections(app: FastifyInstance, maxConnections: number, log: Logger): void {
  const warn = (dropped: number): void => log.warn({ maxConnections, dropped }, 'admin listener full (admin.maxConnections): further connections are closed at accept');
  const cap = new ConnectionCap({ max: maxConnections, warn });
  attachEveryServer(app, (server) => cap.attach(server), (err) => log.error({ err }, 'admin listener: a server for one of its addresses is not capped'));
}

/**
 * A connection's requests answered one at a time, each once the answer before it is written out, and one
 * with more than a few unanswered closed: an authenticated client that pipelined thousands of GET /config
 * in one write and never read had each rendered and its answer held in the process (as the metrics port).
 */
function oneAtATime(app: FastifyInstance): void {
  const turns = new PipelinedTurns();
  app.addHook('onRequest', async (req, reply) => {
    const turn = turns.take(req.raw.socket, reply.raw);
    if (turn) await turn;
    if (!turn || req.raw.socket.destroyed) return reply.hijack();
  });
}

/** A refusal's headers by status: 400 and 401 are RFC 6750 §3's (a challenge), 503 says when to retry. */
const REFUSAL_HEADERS: Partial<Record<AdminRefusal['status'], Record<string, string>>> = {
  400: { 'www-authenticate': 'Bearer realm="switchboard-admin", error="invalid_request"' },
  401: { 'www-authenticate': 'Bearer realm="switchboard-admin"' },
  503: { 'retry-after': '5' },
};

/**
 * Every request's checks before its route: another site's page or a rebound name refused (admin-origin),
 * then the token (every route but the console's files).
 */
/**
 * A request's URL as a log line or an answer shows it: its path, cut at 200 characters, never its query.
 * The query is the caller's, and the very request refused for a token in it (refusePlacement) carries that
 * token there: logged whole, the operator's token went into every log it was shipped to.
 */
function shownPath(url: string): string {
  const q = url.indexOf('?');
  return (q < 0 ? url : url.slice(0, q)).slice(0, 200);
}

function guardRequests(app: FastifyInstance, target: AdminTarget, loopback: boolean, log: Logger, events: AdminEvents): void {
  // A refusal's warning is written at a bounded rate: a page open in an operator's browser, or a
  // scanner, sends requests as fast as it likes, and each was a log line of its own.
  const refusals = new BoundedWarnings(log, 'admin API requests refused without a warning each (more than the log takes); their count');
  app.addHook('preClose', async () => {
    refusals.close();
    events.close();
  });
  app.addHook('onRequest', async (req, reply) => {
    const fetchSite = req.headers['sec-fetch-site'];
    const crossSite = refuseCrossSite(req.headers.host, req.headers.origin, loopback, Array.isArray(fetchSite) ? fetchSite[0] : fetchSite);
    if (crossSite) {
      refusals.warn({ method: req.method, url: shownPath(req.url), host: req.headers.host, origin: req.headers.origin }, `admin API request refused: ${crossSite}`);
      return reply.code(403).send({ error: { code: 'forbidden', message: crossSite } });
    }
    if (isConsoleFile(req.method, req.url)) return;
    const refusal = refusePlacement(req.raw.rawHeaders, req.url) ?? (await refuseWith(req.headers.authorization, () => target.credentials()));
    if (!refusal) return;
    refusals.warn({ method: req.method, url: shownPath(req.url), status: refusal.status }, `admin API request refused: ${refusal.message}`);
    const code = { 400: 'bad_request', 401: 'unauthorized', 403: 'forbidden', 500: 'internal', 503: 'unavailable' }[refusal.status];
    return reply.code(refusal.status).headers(REFUSAL_HEADERS[refusal.status] ?? {}).send({ error: { code, message: refusal.message } });
  });
}

/** The admin API and the web console as a Fastify instance of its own (not listening): its own port, never the MCP one. */
/** `listenHost`: the address it listens on (admin.host); a loopback one also checks the Host header (see admin-origin). */
export async function buildAdminServer(target: AdminTarget, logger: Logger, listenHost = '127.0.0.1', o: AdminListenerOptions = {}): Promise<FastifyInstance> {
  const loopback = isLoopbackName(listenHost);
  // Closing cuts every connection: a console's event stream or a keep-alive socket must not hold a
  // shutdown up (Node's idle tracking missed sockets after a stream the browser dropped: a 72 s wait).
  // The MCP listener's deadlines: node's own kept a silent connection 60 s (checked every 30 s).
  const deadlines = httpDeadlines(o.headersTimeoutMs ?? 10_000, o.requestTimeoutMs ?? 30_000);
  const app = Fastify({ logger: false, bodyLimit: 64 * 1024, forceCloseConnections: true, requestTimeout: deadlines.requestTimeout, http: deadlines, frameworkErrors });
  const log = logger.child({ component: 'admin' });
  capConnections(app, o.maxConnections ?? 64, log);
  const events = new AdminEvents(target, log, o.keepAliveMs);
  const { assets, problem } = loadConsoleAssets();
  if (problem) log.warn(problem);
  app.addHook('onSend', async (_req, reply, payload) => {
    reply.headers(SECURITY_HEADERS);
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    return payload;
  });
  // An operator's action shows at once in every open console, not at the next tick. Only one that
  // succeeded (2xx: authenticated, and it did something): refused or unknown requests recomputed every
  // view too, so anyone reaching the port could keep every replica and the store busy without a token.
  app.addHook('onResponse', async (req, reply) => {
    const succeeded = reply.statusCode >= 200 && reply.statusCode < 300;
    if (succeeded && req.method !== 'GET' && req.method !== 'HEAD') events.nudge();
  });
  oneAtATime(app);
  guardRequests(app, target, loopback, log, events);
  app.setErrorHandler((err: Error & { statusCode?: number; status?: number; code?: unknown; replica?: unknown; replicas?: unknown }, req, reply) => {
    if (err.statusCode && err.statusCode < 500) return fail(reply, err.statusCode, 'bad_request', err.message);
    // The session store unreachable (SWB_STORE_UNAVAILABLE): the cluster-wide answers cannot be given now.
    if (err.status === 503) return fail(reply, 503, 'unavailable', err.message);
    // Another replica took the request and did not answer (frozen, overloaded), or answered with an error: not a fault of this one.
    if ((err.status === 504 && err.code === 'replica_timeout') || (err.status === 502 && err.code === 'replica_error')) {
      log.warn({ method: req.method, url: shownPath(req.url), replica: err.replica ?? err.replicas, code: err.code }, `admin API: ${err.message}`);
      return fail(reply, err.status, err.code, err.message);
    }
    log.error({ err }, 'admin API route failed');
    return fail(reply, 500, 'internal', err.message);
  });
  app.setNotFoundHandler((req, reply) => fail(reply, 404, 'not_found', `no route ${req.method} ${shownPath(req.url)}: see /openapi.json`));
  for (const r of ADMIN_ROUTES) app.route({ method: r.method, url: r.url, handler: (req, reply) => r.handler(target, req as never, reply, events) });
  app.get('/', (req, reply) => serveAsset(assets.get('index.html'), req, reply));
  app.get<{ Params: { file: string } }>('/console/:file', (req, reply) => serveAsset(req.params.file === 'index.html' ? undefined : assets.get(req.params.file), req, reply));
  await app.ready();
  return app;
}

/** Starts the admin API on host:port; resolves with it and its URL. */
export async function startAdminServer(target: AdminTarget, logger: Logger, host: string, port: number, o: AdminListenerOptions = {}): Promise<{ app: FastifyInstance; url: string }> {
  const app = await buildAdminServer(target, logger, host, o);
  await app.listen({ host, port });
  const a = app.server.address() as { address: string; port: number };
  return { app, url: `http://${a.address.includes(':') ? `[${a.address}]` : a.address}:${a.port}` };
}
