import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHttpClientTransport } from '../../src/upstream/streamable-http-client.js';
import { startRemotePool, type RemotePool } from './remote-pool.js';

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
export function legacyHttpPool(url: string, extra: Record<string, unknown> = {}): Promise<RemotePool> {
  return startRemotePool({ transport: 'streamable-http', url, era: 'legacy', healthCheck: { intervalMs: 0 }, ...extra }, (u, agent, log) => new StreamableHttpClientTransport(u, agent, undefined, log));
}
