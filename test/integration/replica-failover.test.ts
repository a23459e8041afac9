import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Redis } from 'ioredis';
import { openSession, post } from '../helpers/http-edge.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { rotatingFetch, startReplica, startReplicas, type Replica } from '../helpers/replicas.js';
import { textOf } from '../helpers/sdk.js';

// Failover without waiting for a heartbeat to lapse: three replicas with the shipped timings (a heartbeat
// lasts 5 s), every request of every session rotated over them, the owner of the sessions killed with
// SIGKILL. Calls sent after the kill must all succeed, at once, on shared and per-tenant upstreams.

async function rotatingClient(live: () => Replica[]): Promise<Client> {
  const client = new Client({ name: 'rotating', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', live()[0]!.base), { fetch: rotatingFetch(live) as typeof fetch }));
  return client;
}

interface Tally {
  sent: number;
  correct: number;
  wrong: number;
  failed: string[];
}

/** `rounds` echo calls per client with unique payloads: an answer is right, wrong (crossed) or a failure. */
async function echoes(clients: Client[], rounds: number, tag: string): Promise<Tally> {
  const tally: Tally = { sent: 0, correct: 0, wrong: 0, failed: [] };
  await Promise.all(
    clients.map(async (c, ci) => {
      for (let k = 0; k < rounds; k++) {
        const msg = `${tag}:${ci}:${k}:${Math.random()}`;
        tally.sent++;
        try {
          if (textOf(await c.callTool({ name: 'echo', arguments: { message: msg } })) === `Echo: ${msg}`) tally.correct++;
          else tally.wrong++;
        } catch (err) {
          tally.failed.push((err as Error).message);
        }
      }
    }),
  );
  return tally;
}

for (const sharing of ['shared', 'per-tenant'] as const) {
  describe(`kill -9 of the owner, ${sharing} upstream, shipped heartbeat timings`, { timeout: 120_000 }, () => {
    let redis: TestRedis;
    let replicas: Replica[] = [];
    let live: Replica[] = [];

    before(async () => {
      redis = await startRedis();
      replicas = await startReplicas(['a', 'b', 'c'].map((n) => startReplica(`${n}-${sharing}`, redis.url, sharing, '', 'defaults')));
      live = [...replicas];
    });
    after(async () => {
      for (const r of replicas) r.child.kill('SIGKILL');
      await redis?.stop();
    });

    it('every call sent after the kill is answered, and answered right', async () => {
      // Each client's first request (initialize) goes to the first replica: it owns all five sessions.
      const clients = await Promise.all(Array.from({ length: 5 }, () => rotatingClient(() => live)));
      const warm = await echoes(clients, 3, 'before');
      assert.deepEqual(warm, { sent: 15, correct: 15, wrong: 0, failed: [] });
      const victim = live[0]!;
      victim.child.kill('SIGKILL');
      await victim.exited;
      live = live.filter((r) => r !== victim);
      await sleep(500); // well inside the victim's heartbeat (5 s): it still looks alive in Redis
      const afterKill = await echoes(clients, 12, 'after');
      console.log(`${sharing}: calls after kill -9: ${JSON.stringify({ ...afterKill, failed: afterKill.failed.length })}`, afterKill.failed.slice(0, 3));
      assert.deepEqual(afterKill.failed, []);
      assert.deepEqual(afterKill, { sent: 60, correct: 60, wrong: 0, failed: [] });
      await Promise.all(clients.map((c) => c.close()));
    });
  });
}

/** One JSON-RPC POST on a session; the answer read from JSON or from the SSE stream it comes on. */
async function rpc(base: string, sid: string | undefined, message: object): Promise<{ status: number; sid: string | null; body: any }> {
  const res = await fetch(new URL('/mcp', base), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(sid ? { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' } : {}) },
    body: JSON.stringify(message),
  });
  const text = await res.text();
  const data = res.headers.get('content-type')?.includes('text/event-stream') ? text.split('\n').filter((l) => l.startsWith('data: ') && l.length > 6).at(-1)?.slice(6) : text;
  return { status: res.status, sid: res.headers.get('mcp-session-id'), body: data ? JSON.parse(data) : undefined };
}

describe('requests in flight on an owner killed with SIGKILL', { timeout: 120_000 }, () => {
  it('an idempotent one is run again by the replica that forwarded it; a tools/call is not replayed', async () => {
    const redis = await startRedis();
    const [owner, other] = await startReplicas(['o', 'x'].map((n) => startReplica(`inflight-${n}`, redis.url, 'shared', '', 'defaults')));
    try {
      const init = await rpc(owner!.base, undefined, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
      const sid = init.sid!;
      assert.equal((await rpc(owner!.base, sid, { jsonrpc: '2.0', method: 'notifications/initialized' })).status, 202);
      // Frozen, the owner still holds its Redis connections: the forwards reach its inbox and wait there.
      owner!.child.kill('SIGSTOP');
      const list = rpc(other!.base, sid, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
      const call = rpc(other!.base, sid, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { message: 'once' } } });
      // Both forwards must be on their way before the kill (else the call is simply taken over and
      // run): the other replica is a process of its own, given time a loaded machine needs.
      await sleep(2000);
      owner!.child.kill('SIGKILL');
      await owner!.exited;
      const [listed, called] = await Promise.all([list, call]);
      assert.equal(listed.status, 200);
      assert.ok(listed.body.result.tools.some((t: { name: string }) => t.name === 'echo'), JSON.stringify(listed.body).slice(0, 300));
      assert.equal(called.status, 503);
      assert.match(called.body.error.message, /may have taken effect: not retried/);
      // The session itself lives on, taken over by the survivor.
      const again = await rpc(other!.base, sid, { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'echo', arguments: { message: 'twice' } } });
      assert.equal(again.body.result.content[0].text, 'Echo: twice');
    } finally {
      for (const r of [owner, other]) r!.child.kill('SIGKILL');
      await redis.stop();
    }
  });
});

describe('a takeover raced by the same session’s other requests', { timeout: 120_000 }, () => {
  it('requests that arrive while the session is being restored wait for it instead of finding it uninitialized', async () => {
    const redis = await startRedis();
    const reps = await startReplicas(['o', 'y', 'z'].map((n) => startReplica(`race-${n}`, redis.url, 'shared', '', 'defaults')));
    const [owner, ...survivors] = reps;
    try {
      const init = await rpc(owner!.base, undefined, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
      const sid = init.sid!;
      assert.equal((await rpc(owner!.base, sid, { jsonrpc: '2.0', method: 'notifications/initialized' })).status, 202);
      owner!.child.kill('SIGKILL');
      await owner!.exited;
      // Twelve calls at once, on both survivors (the client's GET stream and its POSTs reconnect together
      // like this): one replica takes the session over, the other forwards to it; every call is answered.
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          rpc(survivors[i % 2]!.base, sid, { jsonrpc: '2.0', id: 10 + i, method: 'tools/call', params: { name: 'echo', arguments: { message: `m${i}` } } }),
        ),
      );
      assert.deepEqual(
        answers.map((a) => a.body?.result?.content?.[0]?.text ?? JSON.stringify(a.body ?? a.status)),
        Array.from({ length: 12 }, (_, i) => `Echo: m${i}`),
      );
    } finally {
      for (const r of reps) r!.child.kill('SIGKILL');
      await redis.stop();
    }
  });
});

describe('an owner paused past its heartbeat, whose session another replica took over', { timeout: 120_000 }, () => {
  let redis: TestRedis;
  let replicas: Replica[] = [];
  before(async () => {
    redis = await startRedis();
    replicas = await startReplicas(['p1', 'p2'].map((n) => startReplica(n, redis.url)));
  });
  after(async () => {
    for (const r of replicas) {
      r.child.kill('SIGCONT');
      r.child.kill('SIGKILL');
    }
    await redis?.stop();
  });

  it('does not take the session back when it resumes: its copy ends and its requests go to the new owner', async () => {
    const [a, b] = replicas as [Replica, Replica];
    const s = await openSession({ url: (p = '/mcp') => new URL(p, a.base) });
    const owner = new Redis(redis.url);
    try {
      const ownerKey = `swb:owner:${s.sid}`;
      const ownerA = await owner.get(ownerKey);
      a.child.kill('SIGSTOP'); // paused (a long GC, a frozen VM): its heartbeat lapses, its sockets stay open
      await sleep(1500);
      const viaB = await post({ url: (p = '/mcp') => new URL(p, b.base) }, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message: 'b' } } }, { sid: s.sid, version: s.version });
      assert.equal(viaB.status, 200, await viaB.text());
      const ownerB = await owner.get(ownerKey);
      assert.notEqual(ownerB, ownerA, 'b took the session over');
      a.child.kill('SIGCONT');
      // A request through the resumed a that changes the session's state (its record is written again).
      const viaA = await post({ url: (p = '/mcp') => new URL(p, a.base) }, { jsonrpc: '2.0', id: 3, method: 'logging/setLevel', params: { level: 'debug' } }, { sid: s.sid, version: s.version });
      assert.equal(viaA.status, 200, await viaA.text());
      await sleep(1000); // a's next beats
      assert.equal(await owner.get(ownerKey), ownerB, 'the paused replica took the session back: two live copies');
      const again = await post({ url: (p = '/mcp') => new URL(p, b.base) }, { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'echo', arguments: { message: 'again' } } }, { sid: s.sid, version: s.version });
      assert.match(await again.text(), /Echo: again/);
    } finally {
      owner.disconnect();
    }
  });
});
