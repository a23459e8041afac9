// A session idle past session.idleTimeoutMs whose replica then died was taken over by another replica and
// went on (for up to store.redis.sessionTtlMs after its record's last renewal): its idle timeout lived only
// in its owner's memory. Its record now carries its last use (written with the heartbeat, at most every
// eighth of the idle timeout), and a takeover of a session idle past its timeout answers 404, as for any
// ended session. One busy all along (a GET stream open past the idle timeout) is taken over as before.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { openSession, post, type EdgeTarget } from '../helpers/http-edge.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { heartbeats, startReplica, startReplicas, type Replica } from '../helpers/replicas.js';
import { until } from '../helpers/wait.js';

const IDLE_MS = 2000;
/**
 * Past what a takeover allows beyond the idle timeout (a quarter of it, two of the replicas' 200 ms
 * heartbeats: see idleExpired), with a second to spare.
 */
const PAST_IDLE_MS = IDLE_MS * 1.25 + 2 * 200 + 1000;

const target = (r: Replica): EdgeTarget => ({ url: (p = '/mcp') => new URL(p, r.base) });
const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };

describe('taking over a session of a dead replica, with a short session.idleTimeoutMs', { timeout: 180_000 }, () => {
  let redis: TestRedis;
  let raw: Redis;
  let a: Replica, b: Replica, c: Replica;

  before(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
    [a, b, c] = await startReplicas(['a', 'b', 'c'].map((n) => startReplica(`idle-${n}`, redis.url, 'shared', `session: { idleTimeoutMs: ${IDLE_MS} }\n`)));
  });
  after(async () => {
    raw?.disconnect();
    for (const r of [a, b, c]) r?.child.kill('SIGKILL');
    await redis?.stop();
  });

  /**
   * Kills `r` and waits for its heartbeat to lapse: the next replica asked takes its sessions over as a dead
   * owner's (a forward to it first, while its heartbeat lingers, would take them over however idle: a live
   * owner's sweeper ends its own sessions on time).
   */
  async function kill(r: Replica, left: number): Promise<void> {
    r.child.kill('SIGKILL');
    await r.exited;
    await until(`${r.name}'s heartbeat to lapse`, async () => (await heartbeats(redis.url)) === left);
  }

  it('a session idle past its idle timeout when asked is not taken over: 404, its record removed', async () => {
    const s = await openSession(target(a));
    const used = await post(target(a), list, { sid: s.sid, version: s.version });
    assert.equal(used.status, 200, await used.text());
    const lastUse = Date.now();
    await kill(a, 2); // before its sweeper ends the session (due an idle timeout after its last use)
    await until('the session to be idle past its idle timeout', () => Date.now() - lastUse > PAST_IDLE_MS, PAST_IDLE_MS + 5000);
    const res = await post(target(b), list, { sid: s.sid, version: s.version });
    assert.equal(res.status, 404, `an idle session came back on another replica: ${await res.text()}`);
    assert.equal(await raw.exists(`swb:session:${s.sid}`), 0, 'its record is still stored');
  });

  it('a session busy past its idle timeout (its GET stream open) is taken over', async () => {
    const s = await openSession(target(b));
    const stream = new AbortController();
    const get = await fetch(target(b).url(), { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': s.sid, 'mcp-protocol-version': s.version }, signal: stream.signal });
    assert.equal(get.status, 200, 'the GET stream did not open');
    const opened = Date.now();
    await until('the stream to be open past the idle timeout', () => Date.now() - opened > PAST_IDLE_MS, PAST_IDLE_MS + 5000);
    await kill(b, 1);
    stream.abort();
    const res = await post(target(c), list, { sid: s.sid, version: s.version });
    assert.equal(res.status, 200, `a busy session was not taken over: ${await res.text()}`);
  });
});
