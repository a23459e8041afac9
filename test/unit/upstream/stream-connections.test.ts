// Every instance of a remote upstream keeps one stream open for as long as it lives: the standalone GET
// stream (Streamable HTTP, 2025), the HTTP+SSE stream (2024-11-05), the subscriptions/listen stream
// (2026-07-28). Those streams must not take the connections calls need: with as many instances as
// http.maxConnections (64 per-session sessions, or pool.size: 64, with the defaults) each connection was
// held by a stream that never ends, and every call waited for a connection for ever. Real loopback
// servers, the gateway's own transport factory (its undici Agents), a real pool.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/load.js';
import { createLogger } from '../../../src/observability/logger.js';
import { UpstreamTransports } from '../../../src/upstream/transport-factory.js';
import { UpstreamPool } from '../../../src/upstream/upstream-pool.js';
import { startLegacySseUpstream } from '../../helpers/legacy-sse-upstream.js';

const logger = createLogger('silent');
const caller = { id: 's', tenant: 't', clientRequest: async () => ({}), clientNotify: () => {} };
const INIT = { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'u', version: '1' } };

const json = (res: ServerResponse, body: unknown, headers: Record<string, string> = {}) => res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
const openStream = (res: ServerResponse) => (res.writeHead(200, { 'content-type': 'text/event-stream' }), res.write(': open\n\n'));

function readJson(req: IncomingMessage): Promise<{ id?: number; method?: string }> {
  return new Promise((resolve) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => resolve(body ? JSON.parse(body) : {}));
  });
}

/** A 2025-era Streamable HTTP upstream whose GET stream stays open, as a server with notifications to send keeps it. */
async function streamable(req: IncomingMessage, res: ServerResponse, n: () => number): Promise<void> {
  if (req.method === 'GET') return void openStream(res);
  if (req.method === 'DELETE') return void res.writeHead(200).end();
  const m = await readJson(req);
  if (m.id === undefined) return void res.writeHead(202).end();
  json(res, { jsonrpc: '2.0', id: m.id, result: m.method === 'initialize' ? INIT : { tools: [] } }, { 'mcp-session-id': `s${n()}` });
}

/** A 2026-07-28 upstream: each instance's subscriptions/listen stays open. */
async function modern(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const m = await readJson(req);
  if (m.method === 'subscriptions/listen') return void openStream(res);
  const result = m.method === 'server/discover' ? { supportedVersions: ['2026-07-28'], capabilities: { tools: {} } } : { resultType: 'complete', tools: [] };
  json(res, { jsonrpc: '2.0', id: m.id, result });
}

interface Listening {
  url: string;
  close(): void;
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Listening> {
  const server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, close: () => (server.closeAllConnections(), server.close()) };
}

/** How a call to one of `size` instances, each with its stream open, ends within 5 s ('hung' when it does not). */
async function callWithStreamsOpen(upstream: Record<string, unknown>, server: Listening, size = 2): Promise<string> {
  const { url } = server;
  const cfg = parseConfig({ upstreams: [{ name: 'u', url, initTimeoutMs: 5000, healthCheck: { intervalMs: 0 }, pool: { size }, http: { maxConnections: size }, ...upstream }], endpoints: [{ path: '/mcp', upstreams: ['u'] }] }, 'test', {});
  const transports = new UpstreamTransports();
  const pool = new UpstreamPool(cfg.upstreams[0]!, logger, transports.create);
  try {
    await pool.start();
    assert.equal([...pool.instances].filter((i) => i.state === 'ready').length, size, 'every instance started');
    const call = pool.instanceFor(caller).request('tools/list', undefined, { caller });
    return await Promise.race([call.then(() => 'answered', (e: Error) => e.message), new Promise<string>((r) => setTimeout(() => r('hung'), 5000))]);
  } finally {
    await pool.close();
    await transports.close();
    server.close();
  }
}

describe('the streams every remote instance keeps open do not take the connections its calls need (found by a review)', () => {
  it('Streamable HTTP (2025): pool.size instances, as many as http.maxConnections, each with its GET stream open: a call is answered', async () => {
    let n = 0;
    assert.equal(await callWithStreamsOpen({ transport: 'streamable-http', era: 'legacy' }, await listen((req, res) => void streamable(req, res, () => ++n))), 'answered');
  });

  it('2026-07-28: each instance listening (subscriptions/listen open): a call is answered', async () => {
    assert.equal(await callWithStreamsOpen({ transport: 'streamable-http', era: 'modern' }, await listen((req, res) => void modern(req, res))), 'answered');
  });

  it('HTTP+SSE (2024-11-05): each instance with its SSE stream open: a call is answered', async () => {
    // A GET stream per connection, which carries the answers to its POSTs.
    const up = await startLegacySseUpstream((_res, _m, _n, answer) => answer({ tools: [] }));
    assert.equal(await callWithStreamsOpen({ transport: 'sse' }, up), 'answered');
  });
});
