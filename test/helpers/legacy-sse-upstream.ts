// A hand-written legacy HTTP+SSE (2024-11-05) upstream on loopback, for what the SDK's server will not do (refuse
// a POST as the test says), and the gateway's pool of it: the legacy-SSE twin of legacy-http-upstream.ts.
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SseClientTransport } from '../../src/upstream/sse-client.js';
import type { LegacyMessage } from './legacy-http-upstream.js';
import { startRemotePool, type RemotePool } from './remote-pool.js';

const INIT = { protocolVersion: '2024-11-05', capabilities: { tools: {} }, serverInfo: { name: 'u', version: '1' } };

/** What the test's handler is given of a request: its POST, the message, the session n it was posted to, and `answer`, which accepts the POST (202) and sends `result` on session n's stream. */
export type LegacySseHandler = (res: ServerResponse, m: LegacyMessage, session: number, answer: (result: unknown) => void) => void;

export interface LegacySseUpstream {
  url: string;
  /** SSE streams opened so far (session n is the n-th). */
  sessions(): number;
  close(): void;
}

/**
 * The part every test of a hand-written legacy upstream shares: each GET stream is a session n, its endpoint
 * /messages?s=n; initialize is answered on it, a notification accepted (202); every other request is `handle`'s.
 */
export async function startLegacySseUpstream(handle: LegacySseHandler): Promise<LegacySseUpstream> {
  const streams = new Map<number, ServerResponse>();
  let sessions = 0;
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      const n = ++sessions;
      streams.set(n, res);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return void res.write(`event: endpoint\ndata: /messages?s=${n}\n\n`);
    }
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const n = Number(new URL(req.url!, 'http://h').searchParams.get('s'));
      const m = JSON.parse(body) as LegacyMessage;
      const answer = (result: unknown) => {
        res.writeHead(202).end('Accepted');
        streams.get(n)?.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: m.id, result })}\n\n`);
      };
      if (m.id === undefined) return void res.writeHead(202).end('Accepted');
      if (m.method === 'initialize') return answer(INIT);
      handle(res, m, n, answer);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/sse`,
    sessions: () => sessions,
    close: () => (server.closeAllConnections(), server.close()),
  };
}

/** The gateway's side: a started pool of one upstream "u" at `url` (`extra` adds to its config), and its one instance. */
export function legacySsePool(url: string, extra: Record<string, unknown> = {}): Promise<RemotePool> {
  return startRemotePool({ transport: 'sse', url, healthCheck: { intervalMs: 0 }, ...extra }, (u, agent, log) => new SseClientTransport(u, agent, undefined, log));
}
