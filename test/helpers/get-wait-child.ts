// A Streamable HTTP transport closed while its GET loop waits to open the stream again, in a process of its
// own: each GET after the first is refused (503), so by the fifth the wait is 4 s. Once that GET has failed
// it closes the transport, its upstream and its agent, and prints "closed": with nothing left to do, the
// process should then exit by itself, at once. Usage: node --import tsx test/helpers/get-wait-child.ts
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { Agent } from 'undici';
import type { RemoteUpstreamConfig } from '../../src/config/schema.js';
import { createLogger } from '../../src/observability/logger.js';
import { StreamableHttpClientTransport } from '../../src/upstream/streamable-http-client.js';

let gets = 0;
const server = createServer((req, res) => {
  if (req.method === 'GET') return void (++gets === 1 ? res.writeHead(200, { 'content-type': 'text/event-stream' }).end() : res.writeHead(503).end());
  if (req.method === 'DELETE') return void res.writeHead(200).end();
  let text = '';
  req.on('data', (c: Buffer) => (text += c));
  req.on('end', () => {
    const m = JSON.parse(text) as { id?: number };
    if (m.id === undefined) return void res.writeHead(202, { 'mcp-session-id': 's' }).end();
    res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'u', version: '1' } } }));
  });
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const agent = new Agent();
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
const cfg = { name: 'u', url, headers: {}, http: { headersTimeoutMs: 5000, bodyTimeoutMs: 5000, maxMessageBytes: 64 * 1024 } } as unknown as RemoteUpstreamConfig;
let failed = 0;
// Logged just before each wait that follows a failed GET: the fourth is the fifth GET's, a wait of 4 s.
const logger = createLogger('debug', { write: (line: string) => void (line.includes('upstream GET stream broke') && ++failed === 4 && setImmediate(close)) });
const t = new StreamableHttpClientTransport(cfg, agent, undefined, logger);
await t.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
await t.send({ jsonrpc: '2.0', method: 'notifications/initialized' });

async function close(): Promise<void> {
  await t.close();
  server.closeAllConnections();
  server.close();
  await agent.close();
  process.stdout.write('closed\n');
}
