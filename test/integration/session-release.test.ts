// Everything a 2025 session holds is given back when it ends, by each way a session ends: many sessions
// opened and ended one way, then the gateway's own counts (registry, the endpoint's sessions, listeners on
// the shared upstream instance, its resource subscriptions, the event log, the tenant's session slots)
// are what they were before. A leak shows as growth. Real HTTP, a real stdio upstream.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { initializeBody, mcpRequest } from '../helpers/tokens.js';
import { waitFor, withClockAhead } from '../helpers/wait.js';
import type { MemoryEventStore } from '../../src/session/memory-event-store.js';

const CAP = 3;
const ROUNDS = 12;
const IDLE_MS = 1000;
const URI = 'test://watched-resource';

interface Counts {
  registry: number;
  endpoint: number;
  listeners: number;
  subscribers: number;
  events: number;
}

function counts(gw: RunningGateway): Counts {
  const g = gw.app.gateway;
  const inst = [...g.pools.get('fx')!.instances][0]!;
  return {
    registry: g.registry.size,
    endpoint: g.routers[0]!.sessionCount,
    listeners: inst.eventNames().reduce((n, e) => n + inst.listenerCount(e), 0),
    subscribers: inst.subscribers(URI).size,
    events: (g.events as MemoryEventStore).buffered,
  };
}

/** A session that did some work: a list, a subscription, a stream answer kept for a reader that left. */
async function busySession(gw: RunningGateway, initialized = true): Promise<string> {
  const body = initializeBody() as { params: { capabilities: Record<string, unknown> } };
  body.params.capabilities = { sampling: {} };
  const init = await mcpRequest(gw, body);
  assert.equal(init.status, 200, init.text);
  const sid = init.headers.get('mcp-session-id')!;
  if (!initialized) return sid;
  assert.equal((await mcpRequest(gw, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sid })).status, 202);
  const list = await mcpRequest(gw, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { sid });
  assert.ok(list.json?.result, list.text);
  const sub = await mcpRequest(gw, { jsonrpc: '2.0', id: 3, method: 'resources/subscribe', params: { uri: URI } }, { sid });
  assert.ok(sub.json?.result, sub.text);
  return sid;
}

/** Opens sessions one by one, more than the tenant may hold at once, each ended by `end`. */
async function churn(gw: RunningGateway, end: (sid: string) => Promise<void>, initialized = true): Promise<void> {
  for (let i = 0; i < ROUNDS; i++) await end(await busySession(gw, initialized));
}

describe('a session that ends gives back everything it held', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let baseline: Counts;
  before(async () => {
    gw = await startGateway({
      // cancelledHoldMs 0: a call its session's end cancelled gives its slot back at once (its hold, and the
      // slot's return after it: limits-cancelled-hold.test.ts), so the next session's requests are served.
      tenants: [{ name: 'anonymous', endpoints: ['*'], limits: { sessions: CAP, concurrentRequests: 1, cancelledHoldMs: 0 } }],
      session: { idleTimeoutMs: IDLE_MS },
      upstreams: [{ name: 'fx', transport: 'stdio' as const, ...FIXTURE, sharing: 'shared' as const, pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
    // One session first, ended: the instance is started and its lazily made listeners are in place.
    const sid = await busySession(gw);
    await mcpRequest(gw, undefined, { method: 'DELETE', sid });
    baseline = counts(gw);
  });
  after(() => gw?.close());

  it('by DELETE', async () => {
    await churn(gw, async (sid) => assert.equal((await mcpRequest(gw, undefined, { method: 'DELETE', sid })).status, 200));
    assert.deepEqual(counts(gw), baseline);
  });

  it('by idle timeout', async () => {
    const expire = (sid: string) => withClockAhead(IDLE_MS + 50, () => waitFor(() => !gw.app.gateway.registry.get(sid), { timeoutMs: 4000 })).then(() => {});
    await churn(gw, expire);
    await waitFor(() => counts(gw).subscribers === baseline.subscribers);
    assert.deepEqual(counts(gw), baseline);
  });

  it('by idle timeout, never having sent notifications/initialized', async () => {
    const expire = (sid: string) => withClockAhead(IDLE_MS + 50, () => waitFor(() => !gw.app.gateway.registry.get(sid), { timeoutMs: 4000 })).then(() => {});
    await churn(gw, expire, false);
    assert.deepEqual(counts(gw), baseline);
  });

  it('by DELETE while a GET stream is open and a call waits on a question to the client', async () => {
    await churn(gw, async (sid) => {
      const get = await fetch(gw.url(), { headers: { accept: 'text/event-stream', 'mcp-session-id': sid } });
      assert.equal(get.status, 200);
      const call = await fetch(gw.url(), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'test_sampling', arguments: { prompt: 'hi' } } }),
      });
      const reader = call.body!.getReader();
      let text = '';
      while (!text.includes('sampling/createMessage')) text += Buffer.from((await reader.read()).value!).toString();
      assert.equal((await mcpRequest(gw, undefined, { method: 'DELETE', sid })).status, 200);
      while (!(await reader.read()).done);
      await get.body!.cancel().catch(() => {});
    });
    await waitFor(() => counts(gw).listeners === baseline.listeners).catch(() => {});
    assert.deepEqual(counts(gw), baseline);
  });

  it('by DELETE after a second initialize on the session', async () => {
    await churn(gw, async (sid) => {
      const again = await mcpRequest(gw, initializeBody(5), { sid });
      assert.equal(again.json?.error?.code, -32600, again.text);
      assert.equal((await mcpRequest(gw, undefined, { method: 'DELETE', sid })).status, 200);
    });
    assert.deepEqual(counts(gw), baseline);
  });

  it('by DELETE after the shared upstream process crashed and came back', async () => {
    const sids = [];
    for (let i = 0; i < CAP; i++) sids.push(await busySession(gw));
    const inst = [...gw.app.gateway.pools.get('fx')!.instances][0]!;
    const pid = inst.pid!;
    process.kill(pid, 'SIGKILL');
    await waitFor(() => inst.pid !== undefined && inst.pid !== pid, { timeoutMs: 10_000 });
    // Those the restart outlasted ended by their idle timeout meanwhile (404): as good a way to end.
    for (const sid of sids) assert.ok([200, 404].includes((await mcpRequest(gw, undefined, { method: 'DELETE', sid })).status));
    await churn(gw, async (sid) => assert.equal((await mcpRequest(gw, undefined, { method: 'DELETE', sid })).status, 200));
    assert.deepEqual(counts(gw), baseline);
  });

  it('by the close of its legacy SSE stream', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const ac = new AbortController();
      const res = await fetch(`${gw.base}/sse`, { headers: { accept: 'text/event-stream' }, signal: ac.signal });
      assert.equal(res.status, 200);
      const reader = res.body!.getReader();
      let text = '';
      while (!/data: (\S+)/.test(text)) text += Buffer.from((await reader.read()).value!).toString();
      const post = /data: (\S+)/.exec(text)![1]!;
      const send = (m: unknown) => fetch(`${gw.base}${post}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(m) }).then((r) => r.text());
      const answered = async (id: number) => {
        while (!text.includes(`"id":${id}`)) text += Buffer.from((await reader.read()).value!).toString();
      };
      await send(initializeBody());
      await answered(1);
      await send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      await send({ jsonrpc: '2.0', id: 3, method: 'resources/subscribe', params: { uri: URI } });
      await answered(3);
      ac.abort();
      await waitFor(() => gw.app.gateway.registry.size === baseline.registry);
    }
    await waitFor(() => counts(gw).subscribers === baseline.subscribers);
    assert.deepEqual(counts(gw), baseline);
  });
});

describe('a session that ends gives back its per-session instance', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      session: { idleTimeoutMs: IDLE_MS },
      upstreams: [{ name: 'fx', transport: 'stdio' as const, ...FIXTURE, sharing: 'per-session' as const, pool: { warm: 0, max: 2, acquireTimeoutMs: 5000 } }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
  });
  after(() => gw?.close());

  const instances = () => gw.app.gateway.pools.get('fx')!.instances.size;

  it('by DELETE, by idle timeout, and when its process crashed', async () => {
    await churn(gw, async (sid) => assert.equal((await mcpRequest(gw, undefined, { method: 'DELETE', sid })).status, 200));
    await churn(gw, (sid) => withClockAhead(IDLE_MS + 50, () => waitFor(() => !gw.app.gateway.registry.get(sid), { timeoutMs: 4000 })).then(() => {}));
    await churn(gw, async (sid) => {
      const session = gw.app.gateway.registry.get(sid)!;
      const inst = [...gw.app.gateway.pools.get('fx')!.instances].find((i) => i.dedicatedTo === session)!;
      process.kill(inst.pid!, 'SIGKILL');
      assert.ok([200, 404].includes((await mcpRequest(gw, undefined, { method: 'DELETE', sid })).status));
    });
    await waitFor(() => instances() === 0);
    assert.equal(gw.app.gateway.registry.size, 0);
    assert.equal(gw.app.gateway.routers[0]!.sessionCount, 0);
  });
});
