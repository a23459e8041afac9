import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGateway } from './gateway.js';

/** What the remote answers a request with an id: its result, from the method and params. */
export type RemoteAnswer = (method: string, params: Record<string, unknown> | undefined) => Record<string, unknown>;

export interface LoggedRemote {
  /** The gateway's log lines, as written. */
  lines: string[];
  /** Closes the gateway, then the remote. */
  close(): Promise<void>;
}

/**
 * Builds a remote MCP server (Streamable HTTP, JSON answers from `answer`; notifications get 202, GETs 405)
 * and a gateway logging into `lines` with it as its one shared legacy upstream "remote" at /mcp, health
 * checks off: for tests of what the gateway logs about what an upstream sends.
 */
export async function startLoggedRemote(answer: RemoteAnswer): Promise<LoggedRemote> {
  const http = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const m = JSON.parse(body) as { id?: number; method: string; params?: Record<string, unknown> };
      if (m.id === undefined) return void res.writeHead(202).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: answer(m.method, m.params) }));
    });
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  const lines: string[] = [];
  const gw = await startGateway(
    {
      tenants: [{ name: 'anonymous', endpoints: ['*'] }],
      upstreams: [{ name: 'remote', transport: 'streamable-http', url, sharing: 'shared', era: 'legacy', healthCheck: { intervalMs: 0 } }],
      endpoints: [{ path: '/mcp', upstreams: ['remote'] }],
    },
    { logLines: lines },
  ).catch((err: unknown) => {
    http.closeAllConnections();
    http.close();
    throw err;
  });
  return {
    lines,
    close: async () => {
      await gw.close();
      http.closeAllConnections();
      http.close();
    },
  };
}
