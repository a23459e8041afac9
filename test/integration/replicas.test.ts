import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { heartbeats, rotatingFetch, startReplica, startReplicas, type Replica } from '../helpers/replicas.js';
import { textOf } from '../helpers/sdk.js';
import { waitFor } from '../helpers/wait.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

// Three gateway processes sharing sessions through a redis-server of the test's own; clients spread
// every request across the replicas (client-side rotation), so no request is sticky.

interface Tally {
  sent: number;
  answered: number;
  errors: number;
  lost: number;
}

async function rotatingClient(live: () => Replica[]): Promise<Client> {
  const client = new Client({ name: 'rotating', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', live()[0]!.base), { fetch: rotatingFetch(live) as typeof fetch }));
  return client;
}

/** Echo calls with unique payloads: a wrong or missing answer is a lost message. */
async function traffic(clients: Client[], rounds: number, tally: Tally, during?: () => Promise<void>): Promise<void> {
  const work = clients.map(async (c, ci) => {
    for (let k = 0; k < rounds; k++) {
      const msg = `${ci}:${k}:${Math.random()}`;
      tally.sent++;
      try {
        const text = textOf(await c.callTool({ name: 'echo', arguments: { message: msg } }));
        if (text === `Echo: ${msg}`) tally.answered++;
        else tally.lost++;
      } catch {
        tally.errors++;
      }
      await sleep(20);
    }
  });
  await Promise.all([...work, during?.()]);
}

describe('replicas sharing sessions through Redis', { timeout: 240_000 }, () => {
  let redis: TestRedis;
  let replicas: Replica[] = [];
  let live: Replica[] = [];

  before(async () => {
    redis = await startRedis();
    replicas = await startReplicas(['a', 'b', 'c'].map((n) => startReplica(n, redis.url)));
    live = [...replicas];
  });
  after(async () => {
    for (const r of replicas) r.child.kill('SIGKILL');
    await redis?.stop();
  });

  it('any replica serves any session: requests rotate across all three, none sticky', async () => {
    const client = await rotatingClient(() => live);
    const tally: Tally = { sent: 0, answered: 0, errors: 0, lost: 0 };
    await traffic([client], 9, tally);
    assert.deepEqual(tally, { sent: 9, answered: 9, errors: 0, lost: 0 });
    await client.close();
  });

  it('legacy SSE: the stream on one replica, the POSTs on the others', async () => {
    const first = live[0]!;
    const client = new Client({ name: 'legacy', version: '1' });
    let n = 0;
    // The stream goes to the first replica; each POST to the next one in turn.
    const postFetch = (url: string | URL | Request, init?: RequestInit) => {
      const u = new URL(url instanceof Request ? url.url : url);
      u.host = new URL(live[1 + (n++ % (live.length - 1))]!.base).host;
      return fetch(u, init);
    };
    await client.connect(new SSEClientTransport(new URL('/sse', first.base), { fetch: postFetch as typeof fetch }));
    for (let i = 0; i < 4; i++) assert.equal(textOf(await client.callTool({ name: 'echo', arguments: { message: `l${i}` } })), `Echo: l${i}`);
    await client.close();
  });

  it('kill -9 of a replica: shared-upstream sessions carry on elsewhere; errors and losses counted', async () => {
    const clients = await Promise.all(Array.from({ length: 4 }, () => rotatingClient(() => live)));
    const tally: Tally = { sent: 0, answered: 0, errors: 0, lost: 0 };
    await traffic(clients, 15, tally, async () => {
      await waitFor(() => tally.answered >= clients.length); // the traffic is flowing
      const victim = live[0]!;
      victim.child.kill('SIGKILL');
      live = live.filter((r) => r !== victim);
      await victim.exited;
    });
    console.log(`kill -9: ${JSON.stringify(tally)}`);
    assert.equal(tally.lost, 0, 'no message lost or crossed');
    // Calls in flight on the dead replica may fail; everything after the takeover must work.
    assert.ok(tally.errors <= clients.length * 2, `errors: ${tally.errors}`);
    for (const c of clients) assert.equal(textOf(await c.callTool({ name: 'echo', arguments: { message: 'after' } })), 'Echo: after');
    await Promise.all(clients.map((c) => c.close()));
  });

  it('rolling restart (SIGTERM, then a new replica): clients see no errors on shared upstreams', async () => {
    const clients = await Promise.all(Array.from({ length: 4 }, () => rotatingClient(() => live)));
    const tally: Tally = { sent: 0, answered: 0, errors: 0, lost: 0 };
    await traffic(clients, 25, tally, async () => {
      for (const victim of [...live]) {
        // Traffic flows between the steps (unless all of it is already through).
        const seen = tally.answered;
        await waitFor(() => tally.answered >= seen + clients.length || tally.answered + tally.errors + tally.lost === clients.length * 25);
        const fresh = await startReplica(`n${replicas.length}`, redis.url);
        replicas.push(fresh);
        live = [...live.filter((r) => r !== victim), fresh];
        victim.child.kill('SIGTERM');
        assert.equal(await victim.exited, 0);
      }
    });
    console.log(`rolling restart: ${JSON.stringify(tally)}`);
    assert.equal(tally.lost, 0);
    assert.equal(tally.errors, 0);
    await Promise.all(clients.map((c) => c.close()));
  });

  it('a session taken over keeps its resource subscriptions: updates keep coming from the new owner', async () => {
    const client = await rotatingClient(() => live);
    const updates: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params.uri);
    });
    const { resources } = await client.listResources();
    const uri = resources[0]!.uri;
    await client.subscribeResource({ uri });
    const sid = (client.transport as StreamableHTTPClientTransport).sessionId!;
    // The first replica created the session (the first request went there): it owns it.
    const victim = live[0]!;
    victim.child.kill('SIGKILL');
    live = live.filter((r) => r !== victim);
    await victim.exited;
    await waitFor(async () => (await heartbeats(redis.url)) === live.length); // the victim's heartbeat expired
    // Any request makes a live replica take the session over (if the victim owned it) and renew the subscription.
    await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
    await waitFor(() => updates.includes(uri), { timeoutMs: 8000 });
    await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} }).catch(() => {});
    assert.ok(updates.includes(uri), `an update for ${uri} after the takeover (session ${sid})`);
    await client.close();
    const fresh = await startReplica(`s${replicas.length}`, redis.url);
    replicas.push(fresh);
    live.push(fresh);
  });

  it('Redis restarted: existing sessions keep working, new sessions get 503 while it is down, all recovers', async () => {
    const client = await rotatingClient(() => [live[0]!]);
    await redis.stop();
    // Owned locally: the session goes on without Redis.
    assert.equal(textOf(await client.callTool({ name: 'echo', arguments: { message: 'no redis' } })), 'Echo: no redis');
    const init = await fetch(new URL('/mcp', live[0]!.base), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
    assert.equal(init.status, 503);
    assert.ok(init.headers.get('retry-after'));
    await init.text();
    const ready = await fetch(new URL('/readyz', live[0]!.base));
    assert.equal(ready.status, 503);
    await ready.text();
    await redis.restart();
    let ok = false;
    // Every replica the rotating client will use must have reconnected (and re-published), not only one.
    for (let i = 0; i < 100 && !ok; i++) {
      await sleep(100);
      const states = await Promise.all(live.map(async (r) => (await fetch(new URL('/readyz', r.base))).status));
      ok = states.every((s) => s === 200);
    }
    assert.ok(ok, 'every replica ready again after Redis came back');
    const fresh = await rotatingClient(() => live);
    assert.equal(textOf(await fresh.callTool({ name: 'echo', arguments: { message: 'back' } })), 'Echo: back');
    await fresh.close();
    await client.close();
  });
});

describe('per-session upstreams across replicas', { timeout: 120_000 }, () => {
  it('when the owner dies, the client gets 404 and re-initializes, as the spec intends', async () => {
    const redis = await startRedis();
    const reps = await startReplicas(['p', 'q'].map((n) => startReplica(n, redis.url, 'per-session')));
    try {
      const init = await fetch(new URL('/mcp', reps[0]!.base), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
      });
      const sid = init.headers.get('mcp-session-id')!;
      await init.text();
      const ping = (base: string) =>
        fetch(new URL('/mcp', base), {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid },
          body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
        });
      const viaOther = await ping(reps[1]!.base);
      assert.equal(viaOther.status, 200, 'forwarded to the live owner');
      await viaOther.text();
      reps[0]!.child.kill('SIGKILL');
      await reps[0]!.exited;
      await waitFor(async () => (await heartbeats(redis.url)) === 1); // the owner's heartbeat expires
      const afterDeath = await ping(reps[1]!.base);
      assert.equal(afterDeath.status, 404);
      await afterDeath.text();
    } finally {
      for (const r of reps) r.child.kill('SIGKILL');
      await redis.stop();
    }
  });
});
