import { createServer, type Server } from 'node:http';
import type { Metrics } from './metrics.js';

/**
 * /metrics on its own port, so scraping never competes with MCP traffic and the port can stay inside
 * the cluster while the gateway's own port faces clients.
 */
export async function startMetricsServer(metrics: Metrics, host: string, port: number, path: string): Promise<{ server: Server; address: string }> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== path) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    metrics.render(req.headers.accept).then(
      ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(body),
      (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${err.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const a = server.address() as { address: string; port: number };
  return { server, address: `http://${a.address.includes(':') ? `[${a.address}]` : a.address}:${a.port}${path}` };
}
