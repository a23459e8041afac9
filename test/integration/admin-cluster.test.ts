// The admin API with Redis on answers for the whole cluster: two gateway processes on a redis-server of
// the test's own; a session opened on A is listed by B's admin API with A as its holder, B's DELETE has
// A end it (A's client gets 404 next), and once A is dead B removes A's record itself.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { adminReplicaPair, type Replica } from '../helpers/replicas.js';
import { textOf } from '../helpers/sdk.js';
import { events } from '../helpers/admin-events.js';
import { modernPost } from '../helpers/modern-http.js';
import { until, waitFor } from '../helpers/wait.js';

const TOKEN = 'admin-token-for-cluster-tests-0123456789';

async function admin(r: Replica, method: string, path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(new URL(path, r.admin), { method, headers: { authorization: `Bearer ${TOKEN}` } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function openOn(r: Replica): Promise<{ client: Client; id: string }> {
  const client = new Client({ name: 'admin-cluster', version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', r.base));
  await client.connect(transport);
  return { client, id: transport.sessionId! };
}

/** A client's next request on its session, sent as the SDK would (status only). */
async function nextRequestStatus(r: Replica, id: string): Promise<number> {
  const res = await fetch(new URL('/mcp', r.base), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
  });
  await res.body?.cancel();
  return res.status;
}

describe('admin API across replicas (Redis)', { timeout: 120_000 }, () => {
  const pair = adminReplicaPair(TOKEN);
  before(() => assert.ok(pair.a.admin && pair.b.admin, 'both replicas log their admin URL'));

  it("upstreams, tenants' usage and reload answer for every replica: B shows A's instances and sessions, and has A reload its file", async () => {
    const { a, b } = pair;
    const one = await openOn(a);
    try {
      const fromB = (await admin(b, 'GET', '/upstreams')).body.items as Array<{ replica: string; name: string; instances: unknown[] }>;
      const fromA = (await admin(a, 'GET', '/upstreams')).body.items as Array<{ replica: string; name: string }>;
      const replicas = new Set(fromB.map((r) => r.replica));
      assert.equal(replicas.size, 2, `rows of both replicas: ${JSON.stringify(fromB.map((r) => [r.replica, r.name]))}`);
      assert.deepEqual(new Set(fromA.map((r) => r.replica)), replicas, 'A answers for the same two');
      for (const r of fromB) assert.ok(r.instances.length > 0, `${r.replica} runs its own instances of ${r.name}`);

      const sessionsOnA = (await admin(a, 'GET', '/sessions')).body.items.filter((s: any) => s.replica !== null);
      const holder = sessionsOnA.find((s: any) => s.id === one.id)!.replica as string;
      const tenants = (await admin(b, 'GET', '/tenants')).body.items as Array<{ name: string; usage: { sessions: number }; byReplica: Record<string, { sessions: number }> }>;
      const t = tenants.find((x) => x.byReplica[holder]?.sessions)!;
      assert.ok(t, `B reports the session held by ${holder} in its tenant's usage: ${JSON.stringify(tenants)}`);
      assert.equal(Object.keys(t.byReplica).length, 2);
      assert.ok(t.usage.sessions >= t.byReplica[holder]!.sessions);

      const reload = await admin(b, 'POST', '/reload');
      assert.equal(reload.status, 200);
      assert.deepEqual(new Set(Object.keys(reload.body.replicas)), replicas, 'every replica reloaded its own file');
      for (const r of Object.values(reload.body.replicas) as Array<{ result: string }>) assert.equal(r.result, 'unchanged');
    } finally {
      await one.client.close();
    }
  });

  it("B lists A's modern-era session, restarts the upstream on both replicas, and tails A's audit lines", async () => {
    const { a, b } = pair;
    const call = await modernPost(new URL('/mcp', a.base), 'tools/call', { name: 'echo', arguments: { message: 'modern' } });
    assert.equal(call.status, 200, JSON.stringify(call.body));
    const modern = (await admin(b, 'GET', '/sessions')).body.items.find((s: any) => s.era === 'modern');
    assert.ok(modern, "B lists the gateway's modern-era side of A's request");
    assert.equal(modern.inflight, 0);
    assert.equal(modern.protocolVersion, '2026-07-28');
    const aReplica = modern.replica as string;

    // The audit tail of B's console shows A's calls, each line naming A.
    const { stream } = await events(b.admin!, TOKEN);
    try {
      await until("B's console connected", () => stream!.seen.some((e) => e.event === 'hello'));
      // The first read only starts A's ring: call until a line of A arrives.
      const seen = await waitFor(
        async () => {
          await modernPost(new URL('/mcp', a.base), 'tools/call', { name: 'echo', arguments: { message: 'audited' } });
          return stream!.seen.some((e) => e.event === 'audit' && e.data.lines.some((l: any) => l.replica === aReplica && l.method === 'tools/call'));
        },
        { timeoutMs: 15_000, intervalMs: 250 },
      );
      assert.ok(seen, "A's call in B's audit tail, naming A");
    } finally {
      stream!.close();
    }

    // Restart from B: both replicas replace their pool (each its own process).
    const pidsOf = async () => new Map(((await admin(b, 'GET', '/upstreams')).body.items as any[]).map((r) => [r.replica, r.instances.map((i: any) => i.pid).join(',')]));
    const before = await pidsOf();
    const restarted = await admin(b, 'POST', '/upstreams/everything/restart');
    assert.equal(restarted.status, 200, JSON.stringify(restarted.body));
    assert.equal(Object.keys(restarted.body.replicas).length, 2, JSON.stringify(restarted.body));
    for (const r of Object.values(restarted.body.replicas) as Array<{ result: string }>) assert.equal(r.result, 'applied');
    const after = await waitFor(async () => {
      const now = await pidsOf();
      return [...before].every(([replica, pids]) => now.get(replica) && now.get(replica) !== pids && !now.get(replica)!.split(',').includes('null')) ? now : undefined;
    }, { timeoutMs: 30_000 });
    assert.ok(after, `both replicas run new processes: ${JSON.stringify([...before])}`);
  });

  it("B lists A's sessions with A as their holder; B's DELETE has A end one; with A dead, B removes the record", async () => {
    const { a, b } = pair;
    const one = await openOn(a);
    const two = await openOn(a);
    const holder = (await admin(a, 'GET', '/sessions')).body.items.find((s: any) => s.id === one.id)?.replica;
    assert.equal(typeof holder, 'string', 'A lists its own session');

    const listed = (await admin(b, 'GET', '/sessions')).body.items;
    const row = listed.find((s: any) => s.id === one.id);
    assert.ok(row, "B lists the session A holds");
    assert.equal(row.replica, holder);
    assert.equal(row.replicaAlive, true);
    assert.equal(row.inflight, 0, 'A answered for its sessions, with what is in flight');
    assert.equal(row.endpoint, '/mcp');
    assert.equal(row.transport, 'streamable-http');
    assert.ok(listed.some((s: any) => s.id === two.id));

    const ended = await admin(b, 'DELETE', `/sessions/${one.id}`);
    assert.equal(ended.status, 200);
    assert.deepEqual(ended.body, { id: one.id, endedBy: holder, holder });
    assert.equal(await nextRequestStatus(a, one.id), 404, "A's client finds its session gone");
    assert.equal((await admin(b, 'DELETE', `/sessions/${one.id}`)).status, 404);
    assert.ok(!(await admin(b, 'GET', '/sessions')).body.items.some((s: any) => s.id === one.id));
    assert.match(textOf(await two.client.callTool({ name: 'echo', arguments: { message: 'still here' } })), /still here/, 'the other session is untouched');

    // A killed outright: B sees its holder not alive, and ends the session by removing its record.
    a.child.kill('SIGKILL');
    await a.exited;
    // Up to replicaTtlMs (5 s) for A's heartbeat to lapse, and a listing started just before that may wait
    // forwardTimeoutMs (10 s) for A's answer over the admin channel: 10 s was too short once in CI.
    const dead = await waitFor(async () => (await admin(b, 'GET', '/sessions')).body.items.find((s: any) => s.id === two.id && !s.replicaAlive), { timeoutMs: 25_000 });
    assert.ok(dead, "B sees A's session with A not alive");
    assert.equal(dead.replica, holder);
    const removed = await admin(b, 'DELETE', `/sessions/${two.id}`);
    assert.equal(removed.status, 200);
    assert.equal(removed.body.holder, holder);
    assert.notEqual(removed.body.endedBy, holder, 'ended by B, the replica answering');
    assert.equal(await nextRequestStatus(b, two.id), 404, 'the session is gone: not taken over');
  });
});
