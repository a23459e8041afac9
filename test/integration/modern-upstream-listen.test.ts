// A 2026-07-28 upstream may end the gateway's subscriptions/listen stream on its own: by sending
// notifications/cancelled for the listen request (the spec's cancellation page: a server MUST, when it
// tears a subscription down), or by dropping the stream (a restart, a proxy's idle timeout). Either way
// the gateway must listen again, or every later list_changed and resource update is lost for good.
// The upstream here is a raw HTTP server (real port), so the test decides exactly how each listen ends.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const V = '2026-07-28';
type FirstListenEnd = 'cancelled' | 'dropped';

/** A modern-only upstream whose first listen stream ends as `how` says; later ones stay open. */
class ListenUpstream {
  readonly server: Server;
  /** Listen streams opened so far (the requests' ids), and the ones still open. */
  readonly listens: Array<string | number> = [];
  readonly open = new Set<ServerResponse>();
  readonly #how: FirstListenEnd;

  constructor(how: FirstListenEnd) {
    this.#how = how;
    this.server = createServer((req, res) => void this.#serve(req, res));
  }

  async start(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server.address() as { port: number }).port}/mcp`;
  }

  /** Sends a message on every listen stream still open. */
  announce(method: string): void {
    for (const res of this.open) res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method, params: {} })}\n\n`);
  }

  close(): void {
    for (const res of this.open) res.destroy();
    this.server.close();
  }

  async #serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let text = '';
    for await (const chunk of req) text += chunk;
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const m = JSON.parse(text);
    const json = (result: Record<string, unknown>) => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { resultType: 'complete', ...result } }));
    if (m.method === 'server/discover') return json({ supportedVersions: [V], capabilities: { tools: { listChanged: true } }, ttlMs: 0, cacheScope: 'public', _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'listen-upstream', version: '1' } } });
    if (m.method === 'tools/list') return json({ tools: [{ name: 'noop', inputSchema: { type: 'object' } }], ttlMs: 0, cacheScope: 'public' });
    // A call whose stream the upstream closes before answering (a crash mid-call, a proxy's cut).
    if (m.method === 'tools/call') return void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(': nothing\n\n');
    if (m.method !== 'subscriptions/listen') return void res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } }));
    this.listens.push(m.id);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const tag = { 'io.modelcontextprotocol/subscriptionId': m.id };
    res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { notifications: m.params.notifications, _meta: tag } })}\n\n`);
    if (this.listens.length > 1) {
      this.open.add(res);
      res.on('close', () => this.open.delete(res));
      return;
    }
    // The first listen ends shortly after its acknowledgement.
    setTimeout(() => {
      if (this.#how === 'dropped') return void res.end();
      // Torn down by the server: it says so and keeps the connection for a while (as a stdio server has no stream to close).
      res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: m.id, reason: 'subscription torn down' } })}\n\n`);
      this.open.add(res);
      res.on('close', () => this.open.delete(res));
    }, 100);
  }
}

for (const how of ['cancelled', 'dropped'] as const) {
  describe(`a modern upstream's listen stream ${how === 'cancelled' ? 'torn down with notifications/cancelled' : 'dropped without an answer'}`, () => {
    let upstream: ListenUpstream;
    let gw: RunningGateway;
    before(async () => {
      upstream = new ListenUpstream(how);
      const url = await upstream.start();
      gw = await startGateway({
        pinning: { mode: 'off' },
        upstreams: [{ name: 'modern', transport: 'streamable-http', url, era: 'modern', sharing: 'shared', pool: { size: 1 }, requestTimeoutMs: 60_000 }],
        endpoints: [{ path: '/mcp', upstreams: ['modern'] }],
      });
    });
    after(async () => {
      await gw.close();
      upstream.close();
    });

    it('is opened again, and the list_changed sent on the new one reaches a 2025 client', async () => {
      const client = await connectClient(gw, 'streamable-http');
      let changed = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
      try {
        await until('the gateway listens again after the upstream ended its first listen', () => upstream.listens.length >= 2 && upstream.open.size >= 1, 15_000);
        if (how === 'cancelled') await until('the torn-down stream is let go', () => upstream.open.size === 1, 15_000);
        upstream.announce('notifications/tools/list_changed');
        await until('the 2025 client heard the change', () => changed > 0, 15_000);
      } finally {
        await client.close();
      }
    });

    if (how === 'dropped') {
      it('a call whose stream closes before its answer fails at once, not at its timeout', async () => {
        const client = await connectClient(gw, 'streamable-http');
        try {
          const started = Date.now();
          const r = await client.callTool({ name: 'noop', arguments: {} }).catch((err: Error) => err);
          assert.ok(r instanceof Error, JSON.stringify(r));
          assert.match(r.message, /closed the stream/);
          assert.ok(Date.now() - started < 20_000, 'well before the 60 s request timeout');
        } finally {
          await client.close();
        }
      });
    }
  });
}
