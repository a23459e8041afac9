import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { parseConfig } from '../../src/config/load.js';
import type { RemoteUpstreamConfig } from '../../src/config/schema.js';
import { createLogger } from '../../src/observability/logger.js';
import { StreamableHttpClientTransport } from '../../src/upstream/streamable-http-client.js';
import type { UpstreamInstance } from '../../src/upstream/upstream-instance.js';
import { UpstreamPool } from '../../src/upstream/upstream-pool.js';

export interface LegacyMessage {
  id?: number;
  method: string;
  params?: { name?: string; arguments?: Record<string, unknown> };
}

/** What the test's handler is given of a request: the message, and the number n of the session it named (s<n>). */
export type LegacyHandler = (req: IncomingMessage, res: ServerResponse, m: LegacyMessage, session: number) => void;

export interface LegacyHttpUpstream {
  url: string;
  /** initialize requests so far (session n is the n-th). */
  inits(): number;
  close(): void;
}

/**
 * A 2025 Streamable HTTP upstream on loopback, the part every test of a remote upstream's sessions
 * shares: initialize answered with session `s<n>`, DELETE 200, GET 405 (no standalone stream), a
 * notification 202; every other request is `handle`'s.
 */
export async function startLegacyHttpUpstream(handle: LegacyHandler): Promise<LegacyHttpUpstream> {
  let inits = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      if (req.method === 'DELETE') return void res.writeHead(200).end();
      if (req.method === 'GET') return void res.writeHead(405).end();
      const m = JSON.parse(body) as LegacyMessage;
      if (m.method === 'initialize') {
        inits++;
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': `s${inits}` });
        return void res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'u', version: '1' } } }));
      }
      if (m.id === undefined) return void res.writeHead(202).end();
      handle(req, res, m, Number(String(req.headers['mcp-session-id']).slice(1)));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    inits: () => inits,
    close: () => (server.closeAllConnections(), server.close()),
  };
}

/** The gateway's side: a started pool of one upstream "u" at `url` (`extra` adds to its config), and its one instance. */
export async function legacyHttpPool(url: string, extra: Record<string, unknown> = {}): Promise<{ pool: UpstreamPool; instance: UpstreamInstance; close(): Promise<void> }> {
  const cfg = parseConfig({ upstreams: [{ name: 'u', transport: 'streamable-http', url, era: 'legacy', healthCheck: { intervalMs: 0 }, ...extra }], endpoints: [{ path: '/mcp', upstreams: ['u'] }] }, 'test', {});
  const agent = new Agent();
  const pool = new UpstreamPool(cfg.upstreams[0]!, createLogger('silent'), (u, log) => new StreamableHttpClientTransport(u as RemoteUpstreamConfig, agent, undefined, log));
  try {
    await pool.start();
  } catch (err) {
    await pool.close();
    await agent.close();
    throw err;
  }
  return { pool, instance: [...pool.instances][0]!, close: async () => (await pool.close(), await agent.close()) };
}
