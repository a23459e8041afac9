import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent } from 'undici';
import { parseConfig } from '../../../src/config/load.js';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import { createLogger } from '../../../src/observability/logger.js';
import { StreamableHttpClientTransport } from '../../../src/upstream/streamable-http-client.js';
import { UpstreamPool } from '../../../src/upstream/upstream-pool.js';
import { Cancellation } from '../../../src/jsonrpc/cancellation.js';
import { waitFor } from '../../helpers/wait.js';

const logger = createLogger('silent');
const caller = { id: 's', tenant: 't', clientRequest: async () => ({}), clientNotify: () => {} };

type Handler = (req: IncomingMessage, res: ServerResponse, m: { id?: number; method?: string }) => void;

/** A legacy Streamable HTTP upstream on loopback: it counts initialize requests, the rest is `handle`'s. */
async function upstream(handle: Handler): Promise<{ server: Server; url: string; inits: () => number }> {
  let inits = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      if (req.method === 'DELETE') return void res.writeHead(200).end();
      const m = body ? (JSON.parse(body) as { id?: number; method?: string }) : {};
      if (m.method === 'initialize') {
        inits++;
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': `s${inits}` });
        return void res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'u', version: '1' } } }));
      }
      handle(req, res, m);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, inits: () => inits };
}

async function gatewaySide(url: string, restart: Record<string, number> = {}, initTimeoutMs = 3000) {
  // initTimeoutMs also bounds how long a retried request waits for a restart (no test waits on that timer).
  const cfg = parseConfig({ upstreams: [{ name: 'u', transport: 'streamable-http', url, era: 'legacy', initTimeoutMs, healthCheck: { intervalMs: 0 }, restart }], endpoints: [{ path: '/mcp', upstreams: ['u'] }] }, 'test', {});
  const agent = new Agent();
  const pool = new UpstreamPool(cfg.upstreams[0]!, logger, (u, log) => new StreamableHttpClientTransport(u as RemoteUpstreamConfig, agent, undefined, log));
  return { pool, close: async () => (await pool.close(), await agent.close()) };
}

const tools = (res: ServerResponse, id: number | undefined) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result: { tools: [] } }));

describe('an upstream that answers 404 is not re-initialized in a loop (found by a review)', () => {
  it('a GET answered 404 right after initialize means no standalone stream (a POST-only server): one session, and calls work', async () => {
    const up = await upstream((req, res, m) => {
      if (req.method === 'GET') return void res.writeHead(404, { 'content-type': 'text/html' }).end('Cannot GET /mcp'); // Express's default
      if (m.id === undefined) return void res.writeHead(202).end();
      tools(res, m.id);
    });
    const gw = await gatewaySide(up.url);
    try {
      await gw.pool.start();
      await sleep(2000);
      assert.ok(up.inits() <= 3, `${up.inits()} initialize requests in 2 s`);
      const inst = [...gw.pool.instances][0]!;
      assert.equal(inst.state, 'ready');
      assert.deepEqual(await inst.request('tools/list', {}, { caller: caller as never }), { tools: [] });
      assert.equal(up.inits(), 1);
    } finally {
      await gw.close();
      up.server.closeAllConnections();
      up.server.close();
    }
  });

  it('sessions that never become usable (every request after initialize: 404) are retried with the backoff, and not called incompatible', async () => {
    const up = await upstream((_req, res) => void res.writeHead(404, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}'));
    const gw = await gatewaySide(up.url, { initialDelayMs: 250, maxDelayMs: 30_000 });
    try {
      void gw.pool.start().catch(() => {});
      await sleep(2000);
      const inst = [...gw.pool.instances][0]!;
      // 250 ms doubling, jitter on the upper half: at most 5 starts fit in 2 s.
      assert.ok(up.inits() <= 6, `${up.inits()} initialize requests in 2 s`);
      assert.ok(inst.backoffAttempt >= 2, `backoff attempt ${inst.backoffAttempt}`);
      assert.equal(inst.incompatible, false, inst.lastFailure);
      assert.match(inst.lastFailure ?? '', /no longer knows the gateway's session/);
    } finally {
      await gw.close();
      up.server.closeAllConnections();
      up.server.close();
    }
  });

  it('a session that had worked and expires is re-initialized at once, but only once: a new one that expires as soon waits for the backoff', async () => {
    const live = new Set<string>();
    let forgetOnUse = false;
    const up = await upstream((req, res, m) => {
      if (req.method === 'GET') return void res.writeHead(405).end();
      const sid = String(req.headers['mcp-session-id']);
      if (forgetOnUse && m.method === 'tools/list') live.delete(sid); // a non-sticky load balancer: the request lands elsewhere
      if (!live.has(sid) && m.method !== 'notifications/initialized') return void res.writeHead(404).end();
      live.add(sid);
      if (m.id === undefined) return void res.writeHead(202).end();
      tools(res, m.id);
    });
    const gw = await gatewaySide(up.url, { initialDelayMs: 5000, maxDelayMs: 30_000 });
    try {
      await gw.pool.start();
      const inst = [...gw.pool.instances][0]!;
      await inst.request('tools/list', {}, { caller: caller as never });
      // The upstream forgets the session once: a fresh one at once (not after 5 s), and the list is retried on it.
      live.clear();
      const t0 = performance.now();
      assert.deepEqual(await inst.request('tools/list', {}, { caller: caller as never }), { tools: [] });
      assert.ok(performance.now() - t0 < 2000, 'the expiry of a session that had worked is not made to wait for the backoff');
      assert.equal(up.inits(), 2);
      // From now on every session is forgotten on its first use: that one waits for the backoff (5 s or more).
      forgetOnUse = true;
      void inst.request('tools/list', {}, { caller: caller as never }).catch(() => {}); // its retry waits for the restart
      assert.equal(await waitFor(() => inst.state === 'backoff'), true);
      await sleep(1000);
      assert.equal(up.inits(), 2, 'a session that expires again soon after an immediate re-initialize is not re-initialized at once');
    } finally {
      await gw.close();
      up.server.closeAllConnections();
      up.server.close();
    }
  });
});

describe('an idempotent request retried after its upstream lost its session (found by a review)', () => {
  it('ends when its client cancels it while it waits for the restart, not after initTimeoutMs', async () => {
    let restarting = false;
    const held: ServerResponse[] = [];
    const up = await upstream((req, res, m) => {
      if (req.method === 'GET') return void res.writeHead(405).end();
      if (m.id === undefined) return void res.writeHead(202).end();
      restarting = true; // the session is forgotten: the call fails 404, and the next initialize never ends
      res.writeHead(404).end();
    });
    // Every initialize after the first is held: the restart takes as long as initTimeoutMs (60 s).
    const [answer] = up.server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
    up.server.removeAllListeners('request');
    up.server.on('request', (req: IncomingMessage, res: ServerResponse) => (restarting && req.method === 'POST' ? held.push(res) : answer!(req, res)));
    const gw = await gatewaySide(up.url, {}, 60_000);
    try {
      await gw.pool.start();
      const inst = [...gw.pool.instances][0]!;
      const cancel = new Cancellation();
      const call = inst.request('tools/list', {}, { caller: caller as never, signal: cancel }).then(() => 'answered', (e: Error & { code?: string }) => e.code ?? e.message);
      assert.equal(await waitFor(() => held.length > 0 && inst.state === 'starting'), true, 'the restart began');
      cancel.abort('cancelled by the client');
      const guard = sleep(10_000, 'still waiting', { ref: false });
      assert.equal(await Promise.race([call, guard]), 'SWB_SESSION_CLOSED');
    } finally {
      for (const r of held) r.destroy();
      await gw.close();
      up.server.closeAllConnections();
      up.server.close();
    }
  });

  it('and so does one that arrives while the instance starts (its initialize held)', async () => {
    const held: ServerResponse[] = [];
    const up = await upstream(() => {});
    up.server.removeAllListeners('request');
    up.server.on('request', (_req: IncomingMessage, res: ServerResponse) => void held.push(res));
    const gw = await gatewaySide(up.url, {}, 60_000);
    try {
      void gw.pool.start().catch(() => {});
      assert.equal(await waitFor(() => held.length > 0), true, 'the start began');
      const inst = [...gw.pool.instances][0]!;
      const cancel = new Cancellation();
      const call = inst.request('tools/list', {}, { caller: caller as never, signal: cancel }).then(() => 'answered', (e: Error & { code?: string }) => e.code ?? e.message);
      cancel.abort('cancelled by the client');
      assert.equal(await Promise.race([call, sleep(10_000, 'still waiting', { ref: false })]), 'SWB_SESSION_CLOSED');
    } finally {
      for (const r of held) r.destroy();
      await gw.close();
      up.server.closeAllConnections();
      up.server.close();
    }
  });
});
