import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the remote answers a request with an id: its result, from the method, params and HTTP request. */
export type JsonRemoteAnswer = (method: string, params: Record<string, unknown> | undefined, req: IncomingMessage) => Record<string, unknown>;

/**
 * Builds a remote MCP server on a loopback port (Streamable HTTP at /mcp, JSON answers from `answer`;
 * notifications get 202, anything but POST 405): the skeleton of tests' hand-written upstreams.
 */
export async function startJsonRemote(answer: JsonRemoteAnswer): Promise<{ url: string; close(): void }> {
  const http = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const m = JSON.parse(body) as { id?: number; method: string; params?: Record<string, unknown> };
      if (m.id === undefined) return void res.writeHead(202).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: answer(m.method, m.params, req) }));
    });
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, close: () => (http.closeAllConnections(), http.close()) };
}
