// A fake upstream for tests of the Streamable HTTP client transport's GET stream, its remote config,
// and a transport to it that has initialized its session.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import type { RemoteUpstreamConfig } from '../../src/config/schema.js';
import type { JsonRpcMessage } from '../../src/jsonrpc/types.js';
import type { Logger } from '../../src/observability/logger.js';
import { StreamableHttpClientTransport } from '../../src/upstream/streamable-http-client.js';
import type { PaceClock } from '../../src/upstream/pace-clock.js';
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

/**
 * A transport to the upstream `up` (remoteConfig, an agent of its own, logging to `log`) that has sent
 * initialize and notifications/initialized, so its GET stream opens (timed by `clock`, else the real one); what it receives is kept in
 * `received`. `close` closes the transport, then the upstream's server, then the agent.
 */
export async function initializedTransport(up: { server: Server; url: string }, log: Logger, clock?: PaceClock): Promise<{ t: StreamableHttpClientTransport; received: JsonRpcMessage[]; close: () => Promise<void> }> {
  const agent = new Agent();
  const t = new StreamableHttpClientTransport(remoteConfig(up.url), agent, undefined, log, clock);
  const received: JsonRpcMessage[] = [];
  t.onmessage = (m) => received.push(m);
  const close = async () => {
    await t.close();
    up.server.closeAllConnections();
    up.server.close();
    await agent.close();
  };
  try {
    await t.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
    await t.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  } catch (err) {
    await close();
    throw err;
  }
  return { t, received, close };
}
