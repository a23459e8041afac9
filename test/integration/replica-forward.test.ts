import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { ForwardSignature } from '../../src/cluster/forward-signature.js';
import { everythingUpstream, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { startReplica, startReplicas, startReplicaFrom, type Replica } from '../helpers/replicas.js';
import { waitFor } from '../helpers/wait.js';
import { rawPost as post, rawSession as session, RAW_HEADERS as HEADERS } from '../helpers/raw-mcp.js';

// Forwarding between replicas over HTTP (issue #17.2): a request for a session another replica owns goes
// to the owner as a signed HTTP request, and its answer streams back with backpressure.

const echo = (message: string, id: number | string = 2) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message } } });

async function metric(gw: RunningGateway, name: string, labels: string): Promise<number> {
  const text = await (await fetch(gw.app.metricsUrl!)).text();
  const m = new RegExp(`^${name}\\{${labels}\\} (\\d+)`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

describe('forwarding between replicas over HTTP', { timeout: 90_000 }, () => {
  let redis: TestRedis;
  let owner: RunningGateway;
  let other: RunningGateway;
  let walled: RunningGateway;
  let raw: Redis;

  before(async () => {
    redis = await startRedis();
    const config = (extra: Record<string, unknown> = {}) => ({ store: { redis: { url: redis.url, ...extra } }, upstreams: [everythingUpstream('everything', 'shared')], endpoints: [{ path: '/mcp', upstreams: ['everything'] }] });
    owner = await startGateway(config());
    other = await startGateway(config());
    // Alive by Redis, but its advertised address takes no connections (a network policy, a wrong URL).
    walled = await startGateway(config({ advertiseUrl: 'http://127.0.0.1:1' }));
    raw = new Redis(redis.url);
  });
  after(async () => {
    raw?.disconnect();
    await walled?.close();
    await other?.close();
    await owner?.close();
    await redis?.stop();
  });

  it('a request for a session owned elsewhere goes to the owner over HTTP, and the owner keeps the session', async () => {
    const sid = await session(owner.base);
    const before = await metric(other, 'switchboard_cluster_forwards_total', 'via="http"');
    for (let k = 0; k < 3; k++) {
      const r = await post(other.base, echo(`over http ${k}`, k + 10), sid);
      assert.equal(r.status, 200, r.text);
      assert.match(r.text, new RegExp(`Echo: over http ${k}`));
    }
    assert.equal((await metric(other, 'switchboard_cluster_forwards_total', 'via="http"')) - before, 3);
    assert.equal(await metric(other, 'switchboard_cluster_forwards_total', 'via="redis"'), 0);
    assert.equal(await raw.get(`swb:owner:${sid}`), owner.app.gateway.cluster!.replicaId);
    // Each replica advertises where it takes forwards, in its heartbeat.
    assert.equal(await raw.get(`swb:replica:${owner.app.gateway.cluster!.replicaId}`), owner.base);
  });

  it('a forged or expired forward signature is not trusted: counted, served as a client request, the owner keeps its session', async () => {
    const sid = await session(owner.base);
    const ownerId = owner.app.gateway.cluster!.replicaId;
    const otherId = other.app.gateway.cluster!.replicaId;
    const forged = await post(other.base, echo('forged'), sid, { 'x-switchboard-forward': `v1,${ownerId},${otherId},${Date.now()},${'0'.repeat(64)}` });
    assert.match(forged.text, /Echo: forged/);
    assert.equal(await metric(other, 'switchboard_cluster_untrusted_forwards_total', 'reason="bad-signature"'), 1);
    assert.equal(await raw.get(`swb:owner:${sid}`), ownerId);

    // Signed with the group's real secret, but 60 s old: a replayed capture is refused too.
    const secret = new ForwardSignature((await raw.get('swb:forward-secret'))!);
    const body = echo('expired');
    const stale = secret.sign(ownerId, otherId, { method: 'POST', url: '/mcp', session: sid, body: JSON.stringify(body) }, Date.now() - 60_000);
    const expired = await post(other.base, body, sid, { 'x-switchboard-forward': stale });
    assert.match(expired.text, /Echo: expired/);
    assert.equal(await metric(other, 'switchboard_cluster_untrusted_forwards_total', 'reason="expired"'), 1);
    assert.equal(await raw.get(`swb:owner:${sid}`), ownerId);

    // Fresh, but signed for another replica (an advertised address that leads elsewhere): not believed.
    const elsewhere = secret.sign(ownerId, ownerId, { method: 'POST', url: '/mcp', session: sid, body: JSON.stringify(echo('misdirected')) });
    const misdirected = await post(other.base, echo('misdirected'), sid, { 'x-switchboard-forward': elsewhere });
    assert.match(misdirected.text, /Echo: misdirected/);
    assert.equal(await metric(other, 'switchboard_cluster_untrusted_forwards_total', 'reason="misdirected"'), 1);
    assert.equal(await raw.get(`swb:owner:${sid}`), ownerId);

    // The same signature fresh is a forward, which shows the three above were refused for their signature:
    // believed, it is not forwarded again, and since the session's owner is alive elsewhere (its sender read
    // an owner that has moved on) it is not taken from that owner either: a 503 to retry. It was taken over,
    // and the owner, never told, kept serving its own copy: two live copies of one session, until the old
    // one's idle end removed the record of the new one (404 on every other replica).
    const fresh = secret.sign(ownerId, otherId, { method: 'POST', url: '/mcp', session: sid, body: JSON.stringify(echo('fresh')) });
    const trusted = await post(other.base, echo('fresh'), sid, { 'x-switchboard-forward': fresh });
    assert.equal(trusted.status, 503, trusted.text);
    assert.equal(await raw.get(`swb:owner:${sid}`), ownerId);
    assert.equal(other.app.gateway.registry.get(sid), undefined, 'no second copy of the session');
    // The client's retry, an ordinary request, reaches the owner and its one copy of the session.
    const retried = await post(other.base, echo('retried'), sid);
    assert.match(retried.text, /Echo: retried/);
    assert.equal(await raw.get(`swb:owner:${sid}`), ownerId);
  });

  it('an owner alive by Redis but unreachable at its advertised URL is reached over the Redis tunnel instead', async () => {
    const sid = await session(walled.base);
    const before = await metric(other, 'switchboard_cluster_forwards_total', 'via="redis"');
    const r = await post(other.base, echo('around the wall'), sid);
    assert.equal(r.status, 200, r.text);
    assert.match(r.text, /Echo: around the wall/);
    assert.equal((await metric(other, 'switchboard_cluster_forwards_total', 'via="redis"')) - before, 1);
    assert.equal(await raw.get(`swb:owner:${sid}`), walled.app.gateway.cluster!.replicaId);
  });
});

describe('an owner killed outright: the connection is refused, the session is taken over at once', { timeout: 90_000 }, () => {
  let redis: TestRedis;
  let replicas: Replica[] = [];

  before(async () => {
    redis = await startRedis();
    // The shipped timings: the dead owner's heartbeat would last 5 s.
    replicas = await startReplicas(['ka', 'kb'].map((n) => startReplica(n, redis.url, 'shared', '', 'defaults')));
  });
  after(async () => {
    for (const r of replicas) r.child.kill('SIGKILL');
    await redis?.stop();
  });

  it('every call after the kill succeeds through the surviving replica', async () => {
    const [a, b] = replicas as [Replica, Replica];
    const sids = [await session(a.base), await session(a.base), await session(a.base)];
    for (const sid of sids) assert.match((await post(b.base, echo('before'), sid)).text, /Echo: before/);
    a.child.kill('SIGKILL');
    await a.exited;
    const failures: string[] = [];
    for (let k = 0; k < 5; k++) {
      for (const sid of sids) {
        const r = await post(b.base, echo(`after ${k}`), sid);
        if (!r.text.includes(`Echo: after ${k}`)) failures.push(`${r.status} ${r.text.slice(0, 200)}`);
      }
    }
    assert.deepEqual(failures, []);
  });
});

/** Resident memory of a process, bytes (Linux). */
function rss(pid: number): number {
  let status = '';
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return 0; // gone: the caller asserts the owner is alive
  }
  const m = /^VmRSS:\s+(\d+) kB/m.exec(status);
  return m ? Number(m[1]) * 1024 : 0;
}

describe('a slow reader on a forwarded SSE stream', { timeout: 240_000 }, () => {
  const COUNT = 16_000;
  const BYTES = 32 * 1024;
  const BUFFER = 256 * 1024;
  const HEAP_MB = 128;
  let redis: TestRedis;
  let replicas: Replica[] = [];
  let dir: string;

  before(async () => {
    redis = await startRedis();
    dir = mkdtempSync(join(tmpdir(), 'swb-flood-'));
    replicas = await startReplicas(
      ['fa', 'fb'].map((n) => {
        const file = join(dir, `${n}.yaml`);
        // per-session: a notification related to no request goes to its session's GET stream.
        writeFileSync(
          file,
          `server: { host: 127.0.0.1, port: 0, shutdownGraceMs: 1000, maxStreamBufferBytes: ${BUFFER} }
metrics: { enabled: false }
store: { redis: { url: "${redis.url}", heartbeatMs: 200, replicaTtlMs: 1000 } }
upstreams:
  - { name: flood, transport: stdio, sandbox: none, command: ${process.execPath}, args: [${resolve('test/fixtures/flood-server.mjs')}], sharing: per-session, pool: { warm: 1 } }
endpoints: [{ path: /mcp, upstreams: [flood] }]
`,
        );
        // A capped heap: an owner that buffered the flood (500 MB) would die of it, so the test does not
        // hang on how lazily V8 gives back the churn of handling that much JSON on a loaded machine.
        return startReplicaFrom(n, file, [`--max-old-space-size=${HEAP_MB}`]);
      }),
    );
  });
  after(async () => {
    for (const r of replicas) r.child.kill('SIGKILL');
    await redis?.stop();
  });

  /** A request through `base` whose response is not read until asked: its events pile up behind it. */
  async function unread(base: string, method: 'GET' | 'POST', sid: string, body?: string): Promise<IncomingMessage> {
    return new Promise<IncomingMessage>((ok, fail) => {
      const headers = method === 'GET' ? { accept: 'text/event-stream', 'mcp-session-id': sid } : { ...HEADERS, 'mcp-session-id': sid, 'content-length': Buffer.byteLength(body!) };
      const req = httpRequest(new URL('/mcp', base), { method, headers }, ok);
      req.on('error', fail);
      req.end(body);
    });
  }

  /** Everything left on a response, once it ends. */
  async function rest(res: IncomingMessage): Promise<string> {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (c: string) => (text += c));
    await new Promise<void>((ok) => res.once('close', ok));
    return text;
  }

  /**
   * Runs `flood` on a session owned by the first replica while `res` (a stream relayed by the second)
   * is not read; returns the owner's RSS before and at its peak, and what reached the client.
   */
  async function flooded(owner: Replica, res: IncomingMessage, flood: () => Promise<void>, done: string): Promise<{ base: number; peak: number; text: string }> {
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /text\/event-stream/);
    const base = rss(owner.child.pid!);
    let peak = base;
    const sampler = setInterval(() => (peak = Math.max(peak, rss(owner.child.pid!))), 50);
    try {
      await flood();
      assert.ok(await waitFor(() => existsSync(done), { timeoutMs: 120_000, intervalMs: 100 }), 'the upstream finished its flood');
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, rss(owner.child.pid!));
    assert.equal(owner.child.exitCode, null, 'the owner lived through the flood');
    return { base, peak, text: await rest(res) };
  }

  function bounded(what: string, r: { base: number; peak: number }, events: number): void {
    const flood = COUNT * BYTES;
    console.log(`slow reader (${what}): ${events} of ${COUNT} events reached the client; owner RSS ${Math.round(r.base / 2 ** 20)} MB → peak ${Math.round(r.peak / 2 ** 20)} MB while ${Math.round(flood / 2 ** 20)} MB were sent`);
    assert.ok(events < COUNT, `the stream was cut (${events} of ${COUNT} events)`);
    // Generous: the stream's buffer is 256 KB; the flood is 500 MB, which an unbounded buffer would hold (with
    // the heap capped, the owner dies of it). What the owner does grow by is the churn of handling that much
    // JSON, which a reader that keeps up causes too (measured with the cap: 33 MB; without it 120 MB on an
    // idle machine and 208 MB on a loaded one, which is why the heap is capped).
    assert.ok(r.peak - r.base < flood / 3, `owner RSS grew by ${Math.round((r.peak - r.base) / 2 ** 20)} MB`);
  }

  it("a POST's stream: cut by the owner when its buffer is full; the owner's memory stays bounded, the session goes on", async () => {
    const [owner, relay] = replicas as [Replica, Replica];
    const sid = await session(owner.base);
    const done = join(dir, 'done-post');
    const body = JSON.stringify({ jsonrpc: '2.0', id: 'f', method: 'tools/call', params: { name: 'flood', arguments: { count: COUNT, bytes: BYTES, doneFile: done }, _meta: { progressToken: 'p' } } });
    const res = await unread(relay.base, 'POST', sid, body);
    const r = await flooded(owner, res, async () => {}, done);
    bounded('POST', r, r.text.split('"notifications/progress"').length - 1);
    assert.doesNotMatch(r.text, /flooded \d+/, 'the answer was not relayed after the cut');
    const after = await post(relay.base, echo('after the flood', 'e'), sid);
    assert.match(after.text, /Echo: after the flood/);
  });

  it('the GET stream: cut by the owner when its buffer is full; the owner memory stays bounded, the session goes on', async () => {
    const [owner, relay] = replicas as [Replica, Replica];
    const sid = await session(owner.base);
    const done = join(dir, 'done-get');
    const res = await unread(relay.base, 'GET', sid);
    const r = await flooded(
      owner,
      res,
      async () => {
        const started = await post(owner.base, { jsonrpc: '2.0', id: 'g', method: 'tools/call', params: { name: 'flood', arguments: { count: COUNT, bytes: BYTES, doneFile: done, detached: true } } }, sid);
        assert.match(started.text, /flooding/);
      },
      done,
    );
    bounded('GET', r, r.text.split('"notifications/message"').length - 1);
    const after = await post(relay.base, echo('after the flood', 'e2'), sid);
    assert.match(after.text, /Echo: after the flood/);
  });
});

describe('a stream relayed over the tunnel whose relaying replica goes away', { timeout: 90_000 }, () => {
  let redis: TestRedis;
  let owner: RunningGateway;
  let relay: RunningGateway;
  before(async () => {
    redis = await startRedis();
    const config = (extra: Record<string, unknown> = {}) => ({ server: { keepAliveMs: 1000 }, store: { redis: { url: redis.url, ...extra } }, upstreams: [everythingUpstream('everything', 'shared')], endpoints: [{ path: '/mcp', upstreams: ['everything'] }] });
    // The owner takes no HTTP forwards: the relay reaches it over the Redis tunnel.
    owner = await startGateway(config({ advertiseUrl: 'http://127.0.0.1:1' }));
    relay = await startGateway(config());
  });
  after(async () => {
    await owner?.close();
    await relay?.close();
    await redis?.stop();
  });

  it('ends on the owner (the session is no longer held open by a stream nobody reads)', async () => {
    const sid = await session(owner.base);
    const s = owner.app.gateway.registry.get(sid)!;
    const ac = new AbortController();
    const res = await fetch(new URL('/mcp', relay.base), { headers: { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' }, signal: ac.signal });
    assert.equal(res.status, 200);
    assert.ok(await waitFor(() => s.activity.streams === 1, { timeoutMs: 5000 }), 'the relayed GET stream is open on the owner');
    // The relaying replica goes away without a word to the owner (its inbox loses its subscriber).
    await relay.close();
    ac.abort();
    assert.ok(await waitFor(() => s.activity.streams === 0, { timeoutMs: 8000 }), 'the owner kept the relayed stream open for a replica that is gone');
  });
});
