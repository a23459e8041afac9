// /readyz while Redis takes commands but answers none: frozen (SIGSTOP), or a partition that leaves the
// connection open (no reset reaches the replica, so the connection is not re-made for the many minutes
// TCP takes to give up). Every new session is refused then (503: its record cannot be written), yet the
// replica said it was ready, so a load balancer kept sending it new sessions while replicas that could
// reach Redis took none. It says not ready from the first heartbeat the store leaves unanswered until one
// is answered again, as it does while the connection is down. A legacy /sse stream asked for then is refused
// (503) before it opens, as while the connection is down: it was answered 200 with its endpoint event, and
// ended a moment later when its record could not be written, which tells its client nothing of retrying.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { Journal } from '../helpers/modern-http.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

describe('readiness while Redis answers nothing', { timeout: 60_000 }, () => {
  let server: TestRedis;
  let gw: RunningGateway;
  const journal = new Journal();

  before(async () => {
    server = await startRedis();
    gw = await startGateway({
      store: { redis: { url: server.url, keyPrefix: 'frozen-ready:', heartbeatMs: 200, replicaTtlMs: 1000 } },
      upstreams: [
        { name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared' },
        { name: 'own', transport: 'stdio', ...FIXTURE, args: [...FIXTURE.args, '--journal', journal.file], sharing: 'per-session' },
      ],
      endpoints: [
        { path: '/mcp', ssePath: '/sse', upstreams: ['fx'] },
        { path: '/own', upstreams: ['own'] },
      ],
    });
  });

  after(async () => {
    server?.resume();
    await gw?.close();
    await server?.stop();
  });

  const readyz = async () => (await fetch(new URL('/readyz', gw.base))).status;

  it('is 503 while the store is frozen, and 200 again once it answers', async () => {
    assert.equal(await readyz(), 200);
    server.pause();
    try {
      // Bounded: several heartbeats' command timeouts (2 s each).
      assert.ok(await waitFor(async () => (await readyz()) === 503, { timeoutMs: 15_000, intervalMs: 200 }), 'still ready while Redis answered nothing');
    } finally {
      server.resume();
    }
    assert.ok(await waitFor(async () => (await readyz()) === 200, { timeoutMs: 15_000, intervalMs: 200 }), 'not ready again after Redis answered');
  });

  it('refuses a legacy /sse stream before it opens once the store has left a heartbeat unanswered', async () => {
    server.pause();
    try {
      assert.ok(await waitFor(async () => (await readyz()) === 503, { timeoutMs: 15_000, intervalMs: 200 }), 'still ready while Redis answered nothing');
      const ac = new AbortController();
      const res = await fetch(new URL('/sse', gw.base), { headers: { accept: 'text/event-stream' }, signal: ac.signal });
      const status = res.status;
      const retry = res.headers.get('retry-after');
      ac.abort();
      assert.equal(status, 503, 'the stream was opened (its endpoint event sent) though its record could not be written');
      assert.ok(retry, 'Retry-After');
    } finally {
      server.resume();
    }
    assert.ok(await waitFor(async () => (await readyz()) === 200, { timeoutMs: 15_000, intervalMs: 200 }));
  });

  it('refuses an initialize at once once the store has left a heartbeat unanswered: no upstream is started for a session it cannot record', async () => {
    server.pause();
    try {
      assert.ok(await waitFor(async () => (await readyz()) === 503, { timeoutMs: 15_000, intervalMs: 200 }), 'still ready while Redis answered nothing');
      const mark = journal.mark();
      const res = await fetch(new URL('/own', gw.base), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
      });
      const body = (await res.json()) as { id?: unknown; error?: { message: string } };
      assert.equal(res.status, 503, JSON.stringify(body));
      assert.equal(body.id, 1);
      assert.ok(res.headers.get('retry-after'), 'Retry-After');
      assert.deepEqual(journal.since(mark).map((m) => m.method), [], 'a per-session upstream was started and initialized for a session refused anyway');
    } finally {
      server.resume();
    }
    assert.ok(await waitFor(async () => (await readyz()) === 200, { timeoutMs: 15_000, intervalMs: 200 }));
  });
});
