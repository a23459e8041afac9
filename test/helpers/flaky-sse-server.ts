// A legacy HTTP+SSE upstream whose starts fail one after another, for the suites on restarts: its first
// streams refused as overloaded (429 with Retry-After) or ended when initialize comes, the later ones served.
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const INIT_RESULT = { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'u', version: '1' } };

export interface FlakySseServer {
  /** Its stream endpoint. */
  url: string;
  /** How many streams were asked for. */
  gets(): number;
  close(): void;
}

/**
 * `throttled`: how many first streams are refused 429 with `Retry-After: retryAfterS`; `endedAt`: the
 * stream (counted from 1, refused ones included) ended as initialize comes on it. Every other stream serves.
 */
export async function startFlakySseServer(o: { throttled?: number; retryAfterS?: number; endedAt: number }): Promise<FlakySseServer> {
  let gets = 0;
  let stream: ServerResponse | undefined;
  let streamNo = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      if (req.method === 'GET') {
        if (++gets <= (o.throttled ?? 0)) return void res.writeHead(429, { 'content-type': 'text/plain', 'retry-after': String(o.retryAfterS ?? 1) }).end('slow down');
        [stream, streamNo] = [res.writeHead(200, { 'content-type': 'text/event-stream' }), gets];
        return void res.write('event: endpoint\ndata: /messages\n\n');
      }
      const m = JSON.parse(body) as { id?: number; method: string };
      res.writeHead(202).end();
      if (m.method === 'initialize' && streamNo === o.endedAt) return void stream?.end();
      if (m.id !== undefined) stream?.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: m.id, result: m.method === 'initialize' ? INIT_RESULT : {} })}\n\n`);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/sse`, gets: () => gets, close: () => (server.closeAllConnections(), server.close()) };
}
