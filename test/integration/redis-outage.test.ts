import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { startReplica, startReplicas, type Replica } from '../helpers/replicas.js';
import { waitFor } from '../helpers/wait.js';

// Two gateway processes sharing sessions through a redis-server of the test's own, which the tests
// freeze (SIGSTOP) and wipe (kill, restart empty on the same port). A session the store cannot vouch
// for is answered 503 + Retry-After, never 404 (a 404 tells the client to start over); its owner keeps
// serving it, and re-publishes it when the store comes back empty.

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function initialize(base: string): Promise<string> {
  const init = await fetch(new URL('/mcp', base), {
    method: 'POST',
    headers: HEADERS,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'outage', version: '1' } } }),
  });
  assert.equal(init.status, 200);
  await init.text();
  const sid = init.headers.get('mcp-session-id')!;
  const ack = await fetch(new URL('/mcp', base), { method: 'POST', headers: { ...HEADERS, 'mcp-session-id': sid }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
  await ack.text();
  return sid;
}

interface Answer {
  status: number;
  retryAfter: string | null;
  body: string;
}

let nextId = 10;
/** An echo call on the session, sent to one replica. */
async function echo(base: string, sid: string, message: string): Promise<Answer> {
  const r = await fetch(new URL('/mcp', base), {
    method: 'POST',
    headers: { ...HEADERS, 'mcp-session-id': sid },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: 'echo', arguments: { message } } }),
  });
  return { status: r.status, retryAfter: r.headers.get('retry-after'), body: await r.text() };
}

/** A GET stream on the session (the standalone SSE stream), through one replica. */
function openStream(base: string, sid: string): Promise<Response> {
  return fetch(new URL('/mcp', base), { headers: { accept: 'text/event-stream', 'mcp-session-id': sid } });
}

/** Polls `check` every 100 ms until it holds, for at most `tries` polls (the shared waitFor). */
const until = (check: () => Promise<boolean>, tries = 100): Promise<boolean> => waitFor(check, { timeoutMs: tries * 100, intervalMs: 100 });

const ready = async (r: Replica) => (await fetch(new URL('/readyz', r.base)).then(async (res) => (await res.text(), res.status))) === 200;

describe('a Redis outage does not end live sessions', { timeout: 180_000 }, () => {
  let redis: TestRedis;
  let owner: Replica;
  let other: Replica;
  let sid: string;

  before(async () => {
    redis = await startRedis();
    [owner, other] = await startReplicas(['o', 'x'].map((n) => startReplica(n, redis.url)));
    sid = await initialize(owner!.base);
    const forwarded = await echo(other!.base, sid, 'before');
    assert.equal(forwarded.status, 200, forwarded.body);
  });
  after(async () => {
    redis.resume();
    for (const r of [owner, other]) r?.child.kill('SIGKILL');
    await redis?.stop();
  });

  it('Redis frozen: the other replica answers 503 with Retry-After (never 404), the owner keeps serving', async () => {
    redis.pause();
    try {
      const seen: Answer[] = [];
      // Sent together: the owner's answers must not wait on the frozen store.
      const [viaOther, viaOwner] = await Promise.all([
        (async () => {
          for (let i = 0; i < 3; i++) seen.push(await echo(other.base, sid, `other ${i}`));
          return seen;
        })(),
        (async () => {
          const out: Answer[] = [];
          for (let i = 0; i < 5; i++) out.push(await echo(owner.base, sid, `owner ${i}`));
          return out;
        })(),
      ]);
      // A resumption the owner cannot replay (the log is in Redis): 503 to retry, not a hang or "unknown event".
      const resume = await fetch(new URL('/mcp', owner.base), {
        headers: { accept: 'text/event-stream', 'mcp-session-id': sid, 'last-event-id': '1_1' },
        signal: AbortSignal.timeout(15_000),
      });
      assert.equal(resume.status, 503, await resume.text());
      assert.ok(resume.headers.get('retry-after'));
      for (const a of viaOther) {
        assert.equal(a.status, 503, `the other replica answered ${a.status}: ${a.body}`);
        assert.ok(a.retryAfter, 'a 503 says when to retry');
      }
      viaOwner.forEach((a, i) => {
        assert.equal(a.status, 200, a.body);
        assert.match(a.body, new RegExp(`Echo: owner ${i}`));
      });
    } finally {
      redis.resume();
    }
    const statuses: number[] = [];
    const back = await until(async () => {
      const a = await echo(other.base, sid, 'after');
      statuses.push(a.status);
      return a.status === 200;
    });
    assert.ok(back, `the other replica serves the session again after the pause (saw ${statuses.join(',')})`);
    assert.ok(!statuses.includes(404), `never 404 (saw ${statuses.join(',')})`);
    for (let i = 0; i < 4; i++) {
      const a = await echo([owner, other][i % 2]!.base, sid, `rotated ${i}`);
      assert.equal(a.status, 200, a.body);
    }
  });

  it('Redis restarted empty: the owner re-publishes its sessions; rotated requests succeed, none 404', async () => {
    const leave = new AbortController();
    const stream = await fetch(new URL('/mcp', other.base), { headers: { accept: 'text/event-stream', 'mcp-session-id': sid }, signal: leave.signal });
    assert.equal(stream.status, 200, 'the GET stream is relayed from the owner');
    // Relayed over HTTP, the stream does not depend on Redis: it stays open through the outage.
    let streamEnded = false;
    const reading = stream.text().then(
      () => (streamEnded = true),
      () => (streamEnded = true),
    );
    await redis.stop();
    const down = await echo(other.base, sid, 'down');
    assert.equal(down.status, 503, `while Redis is down: ${down.status} ${down.body}`);
    assert.ok(down.retryAfter);
    const fromOwner = await echo(owner.base, sid, 'owner while down');
    assert.equal(fromOwner.status, 200, fromOwner.body);
    await redis.restart();
    assert.ok(await until(async () => (await ready(owner)) && (await ready(other))), 'both replicas ready again');
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const a = await echo([other, owner][i % 2]!.base, sid, `rotated ${i}`);
      statuses.push(a.status);
      if (a.status === 200) assert.match(a.body, new RegExp(`Echo: rotated ${i}`));
    }
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 200, 200]);
    assert.equal(streamEnded, false, 'the relayed stream lived through the outage');
    // The client leaves: the owner lets go of the stream it served for the relay, so a new one is not a conflict.
    leave.abort();
    await reading;
    let again: Response | undefined;
    assert.ok(
      await until(async () => {
        again = await openStream(other.base, sid);
        if (again.status === 200) return true;
        await again.text();
        return false;
      }),
      `a new stream opens (last: ${again?.status})`,
    );
    await again!.body?.cancel();
  });

  it('Redis flushed under the replicas (no reconnect): the other replica answers 503 until the owner re-published, never 404', async () => {
    // Once the store has been healthy for a while, a session that never existed is a plain 404 again.
    const unknown = await until(async () => (await echo(other.base, randomUUID(), 'nobody')).status === 404);
    assert.ok(unknown, 'a session that never existed answers 404 once the store is settled');
    const admin = new Redis(redis.url, { lazyConnect: true });
    await admin.connect();
    try {
      await admin.flushall();
    } finally {
      admin.disconnect();
    }
    const statuses: number[] = [];
    const back = await until(async () => {
      const a = await echo(other.base, sid, 'after flush');
      statuses.push(a.status);
      if (a.status === 503) assert.ok(a.retryAfter);
      return a.status === 200;
    });
    assert.ok(back, `served again after the flush (saw ${statuses.join(',')})`);
    assert.ok(!statuses.includes(404), `never 404 (saw ${statuses.join(',')})`);
  });

  it('legacy SSE: a POST reaching another replica than the stream\'s while Redis is frozen gets 503, not 404', async () => {
    const stream = await fetch(new URL('/sse', owner.base), { headers: { accept: 'text/event-stream' } });
    assert.equal(stream.status, 200);
    const reader = stream.body!.getReader();
    let text = '';
    while (!/event: endpoint\ndata: (\S+)/.test(text)) {
      const { value, done } = await reader.read();
      assert.ok(!done, 'the stream names its POST endpoint');
      text += new TextDecoder().decode(value);
    }
    const endpoint = /event: endpoint\ndata: (\S+)/.exec(text)![1]!;
    const post = async (base: string) => {
      const r = await fetch(new URL(endpoint, base), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'ping' }) });
      return { status: r.status, retryAfter: r.headers.get('retry-after'), body: await r.text() };
    };
    assert.equal((await post(other.base)).status, 202, 'forwarded to the stream\'s replica');
    redis.pause();
    let during: Answer;
    try {
      during = await post(other.base);
    } finally {
      redis.resume();
    }
    assert.equal(during.status, 503, during.body);
    assert.ok(during.retryAfter);
    const statuses: number[] = [];
    assert.ok(await until(async () => (statuses.push((await post(other.base)).status), statuses.at(-1) === 202)), `served again (saw ${statuses.join(',')})`);
    assert.ok(!statuses.includes(404), `never 404 (saw ${statuses.join(',')})`);
    await reader.cancel();
  });
});
