// A Streamable HTTP transport closed while its GET loop waits to open the stream again, in a process of its
// own: each GET after the first is refused (503), so by the fifth the wait is 4 s. Once that GET has failed
// it closes the transport, its upstream and its agent, and prints "closed": with nothing left to do, the
// process should then exit by itself, at once. Usage: node --import tsx test/helpers/get-wait-child.ts
import { Agent } from 'undici';
import { createLogger } from '../../src/observability/logger.js';
import { StreamableHttpClientTransport } from '../../src/upstream/streamable-http-client.js';
import { getStreamUpstream, remoteConfig } from './get-stream-upstream.js';

let gets = 0;
const { server, url } = await getStreamUpstream((_req, res) => void (++gets === 1 ? res.writeHead(200, { 'content-type': 'text/event-stream' }).end() : res.writeHead(503).end()));
const agent = new Agent();
const cfg = remoteConfig(url);
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
