import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RemoteUpstreamConfig } from '../../src/config/schema.js';
import { sessionPost } from './session-post.js';

/**
 * A fake 2025-era Streamable HTTP upstream on a loopback port, for tests of the transport's GET stream:
 * every GET goes to `onGet`, a DELETE is answered 200, and POSTs as sessionPost does (session `s1`;
 * any request but initialize gets an empty result).
 */
export async function getStreamUpstream(onGet: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    if (req.method === 'GET') return onGet(req, res);
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    sessionPost(req, res, (m, r) => r.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: {} })));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` };
}

/** A remote upstream's config for `url`, with limits no test here reaches (5 s for headers and body, 64 KiB a message). */
export const remoteConfig = (url: string): RemoteUpstreamConfig =>
  ({ name: 'u', url, headers: {}, http: { headersTimeoutMs: 5000, bodyTimeoutMs: 5000, maxMessageBytes: 64 * 1024 } }) as unknown as RemoteUpstreamConfig;
