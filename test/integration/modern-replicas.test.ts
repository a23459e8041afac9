// A 2026-07-28 retry that lands on another replica. Two gateways share a real redis-server and the same
// modern.requestStateKey, each fronting its own 2025 stdio fixture (journaled). The held upstream call
// lives on the replica that answered input_required; a retry posted to the other one is handed over
// through the cluster tunnel and completes there. When that replica is gone, the retry is refused with
// a clear -32602 at once (not a hang, not a 5xx): closed gracefully, or killed outright (gateway
// processes then, so that kill -9 is real).
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { assertStateRefused, inputRound, Journal, modernPost, openListen } from '../helpers/modern-http.js';
import { startReplicaFrom, startReplicas, type Replica } from '../helpers/replicas.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { textOf } from '../helpers/sdk.js';

const ASKS_NAME = { name: 'test_input_required_result_elicitation', arguments: {} };
const ALICE = { action: 'accept', content: { name: 'Alice' } };

describe('modern retries across replicas (Redis, shared requestStateKey)', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  const requestStateKey = randomBytes(32).toString('base64url');
  const replicas: Array<{ gw: RunningGateway; journal: Journal; closed: boolean }> = [];

  const startReplica = async (sharing: 'shared' | 'per-session' = 'shared') => {
    const journal = new Journal();
    const gw = await startGateway({
      store: { redis: { url: redis.url, keyPrefix: 'modernrep:', heartbeatMs: 200, replicaTtlMs: 1000 } },
      modern: { requestStateKey },
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, args: [...FIXTURE.args, '--journal', journal.file], sharing, pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
    const replica = { gw, journal, closed: false };
    replicas.push(replica);
    return replica;
  };

  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    for (const r of replicas) if (!r.closed) await r.gw.close();
    await redis?.stop();
  });

  it('the retry posted to replica B completes the call held on replica A (through the tunnel)', async () => {
    const a = await startReplica();
    const b = await startReplica();
    const round = inputRound(await modernPost(a.gw.url(), 'tools/call', ASKS_NAME));
    assert.equal(a.gw.app.gateway.modern.held, 1);
    const markA = a.journal.mark();
    const markB = b.journal.mark();
    const retry = { ...ASKS_NAME, inputResponses: { [round.key]: ALICE }, requestState: round.state };
    const done = await modernPost(b.gw.url(), 'tools/call', retry);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(done.body.result.resultType, 'complete');
    assert.equal(textOf(done.body.result), 'Hello, Alice!');
    assert.equal(a.gw.app.gateway.modern.held, 0, 'A finished the call it held');
    assert.equal(b.gw.app.gateway.modern.held, 0, 'B held nothing');
    assert.deepEqual(a.journal.since(markA).map((m) => m.result), [ALICE], "the answer reached A's upstream");
    assert.deepEqual(b.journal.since(markB), [], "nothing reached B's upstream");
    // Used up in the shared store: the same state is a replay on either replica.
    assertStateRefused(await modernPost(b.gw.url(), 'tools/call', retry), 'replayed');
    assertStateRefused(await modernPost(a.gw.url(), 'tools/call', retry), 'replayed');
  });

  it('a list_changed announced by an upstream on replica B reaches a listen stream open on replica A', async () => {
    const a = await startReplica();
    const b = await startReplica();
    const listen = await openListen(a.gw.url(), 'across', { toolsListChanged: true });
    try {
      assert.equal((await listen.next()).method, 'notifications/subscriptions/acknowledged');
      const trigger = await modernPost(b.gw.url(), 'tools/call', { name: 'test_trigger_tool_change', arguments: {} });
      assert.equal(trigger.status, 200, JSON.stringify(trigger.body));
      const changed = await listen.next();
      assert.equal(changed.method, 'notifications/tools/list_changed');
      assert.equal(changed.params._meta['io.modelcontextprotocol/subscriptionId'], 'across');
    } finally {
      listen.close();
    }
  });

  it("a list_changed of a session's own instance on replica B does not reach another's listen stream on replica A", async () => {
    const a = await startReplica('per-session');
    const b = await startReplica('per-session');
    const listen = await openListen(a.gw.url(), 'private', { toolsListChanged: true });
    try {
      assert.equal((await listen.next()).method, 'notifications/subscriptions/acknowledged');
      const trigger = await modernPost(b.gw.url(), 'tools/call', { name: 'test_trigger_tool_change', arguments: {} });
      assert.equal(trigger.status, 200, JSON.stringify(trigger.body));
      const heard = await Promise.race([listen.next(), new Promise((r) => setTimeout(r, 1500, 'nothing'))]);
      assert.equal(heard, 'nothing', `a change of another session's own instance reached this stream: ${JSON.stringify(heard)}`);
    } finally {
      listen.close();
      for (const r of [a, b]) {
        await r.gw.close();
        r.closed = true;
      }
    }
  });

  it('when the holding replica is gone, the retry on another one is refused with -32602 at once', async () => {
    const a = await startReplica();
    const b = replicas.find((r) => r !== a && !r.closed)!;
    const round = inputRound(await modernPost(a.gw.url(), 'tools/call', ASKS_NAME));
    await a.gw.close();
    a.closed = true;
    const markB = b.journal.mark();
    const t0 = performance.now();
    const r = await modernPost(b.gw.url(), 'tools/call', { ...ASKS_NAME, inputResponses: { [round.key]: ALICE }, requestState: round.state });
    assertStateRefused(r, 'gone');
    assert.match(r.body.error.message, /cannot be continued: the gateway replica that held it is gone; send the request again without requestState/);
    assert.ok(performance.now() - t0 < 2000, `answered promptly (${Math.round(performance.now() - t0)} ms)`);
    assert.deepEqual(b.journal.since(markB), [], "nothing reached B's upstream");
    // Starting over on B works: a fresh round, held on B this time.
    const fresh = inputRound(await modernPost(b.gw.url(), 'tools/call', ASKS_NAME));
    const done = await modernPost(b.gw.url(), 'tools/call', { ...ASKS_NAME, inputResponses: { [fresh.key]: ALICE }, requestState: fresh.state });
    assert.equal(textOf(done.body.result), 'Hello, Alice!');
  });
});

/** A gateway process fronting the fixture, its replicas joined through Redis, sealing with `key`. */
async function startProcessReplica(name: string, redisUrl: string, key: string): Promise<Replica & { url: URL }> {
  const file = join(mkdtempSync(join(tmpdir(), `swb-${name}-`)), 'config.yaml');
  writeFileSync(
    file,
    `server: { host: 127.0.0.1, port: 0, shutdownGraceMs: 5000 }
metrics: { enabled: false }
store: { redis: { url: "${redisUrl}", keyPrefix: "modernkill:", heartbeatMs: 200, replicaTtlMs: 1000 } }
modern: { requestStateKey: "${key}" }
upstreams:
  - { name: fx, transport: stdio, sandbox: none, command: ${process.execPath}, args: [${resolve(FIXTURE.args[0]!)}], sharing: shared, pool: { size: 1 } }
endpoints: [{ path: /mcp, upstreams: [fx] }]
`,
  );
  const r = await startReplicaFrom(name, file);
  return { ...r, url: new URL('/mcp', r.base) };
}

describe('modern retry when the holding replica is killed outright (kill -9)', { timeout: 90_000 }, () => {
  let redis: TestRedis;
  const children: ChildProcess[] = [];
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    for (const c of children) c.kill('SIGKILL');
    await redis?.stop();
  });

  it('refused with -32602 at once, although its heartbeat has not expired yet', async () => {
    const key = randomBytes(32).toString('base64url');
    const [p, q] = (await startReplicas([startProcessReplica('p', redis.url, key), startProcessReplica('q', redis.url, key)])) as [Replica & { url: URL }, Replica & { url: URL }];
    children.push(p.child, q.child);
    const round = inputRound(await modernPost(p.url, 'tools/call', ASKS_NAME));
    p.child.kill('SIGKILL');
    await p.exited;
    const t0 = performance.now();
    const r = await modernPost(q.url, 'tools/call', { ...ASKS_NAME, inputResponses: { [round.key]: ALICE }, requestState: round.state });
    assertStateRefused(r, 'gone');
    assert.match(r.body.error.message, /replica that held it is gone/);
    assert.ok(performance.now() - t0 < 2000, `answered promptly (${Math.round(performance.now() - t0)} ms), not after the forward timeout`);
    const fresh = inputRound(await modernPost(q.url, 'tools/call', ASKS_NAME));
    const done = await modernPost(q.url, 'tools/call', { ...ASKS_NAME, inputResponses: { [fresh.key]: ALICE }, requestState: fresh.state });
    assert.equal(textOf(done.body.result), 'Hello, Alice!');
  });
});

describe('a modern retry relayed by another replica, slower than forwardTimeoutMs after its input round', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  const gws: RunningGateway[] = [];
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    for (const gw of gws) await gw.close();
    await redis?.stop();
  });

  it('completes: the holding replica turns the answer into a stream (headers at once, keep-alives), not a 503 and a used-up state', async () => {
    const requestStateKey = randomBytes(32).toString('base64url');
    const start = async () => {
      const gw = await startGateway({
        // The relaying replica waits 500 ms for headers; the call runs 1.5 s after its answer.
        store: { redis: { url: redis.url, keyPrefix: 'modernslow:', heartbeatMs: 200, replicaTtlMs: 1000, forwardTimeoutMs: 500 } },
        modern: { requestStateKey },
        upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, env: { SWB_FIXTURE_AFTER_INPUT_MS: '1500' }, sharing: 'shared', pool: { size: 1 } }],
        endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
      });
      gws.push(gw);
      return gw;
    };
    const a = await start();
    const b = await start();
    const round = inputRound(await modernPost(a.url(), 'tools/call', ASKS_NAME));
    const done = await modernPost(b.url(), 'tools/call', { ...ASKS_NAME, inputResponses: { [round.key]: ALICE }, requestState: round.state });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(done.body.result?.resultType, 'complete', JSON.stringify(done.body));
    assert.equal(textOf(done.body.result), 'Hello, Alice!');
    assert.equal(a.app.gateway.modern.held, 0);
  });
});
