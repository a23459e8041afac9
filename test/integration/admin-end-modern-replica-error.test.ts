// DELETE /sessions/{id} of a 2026-07-28 standing (no record in the store: every replica is asked, question
// end-modern) while a replica answers with an error rather than a yes or a no: a replica on a release that
// knows no end-modern question (a rolling upgrade) answers every one with `unknown admin question
// "end-modern"`, and one whose end of the standing failed answers with that failure. The error was only
// logged and the operator got 404 "no session", though that replica may hold the standing. It is now
// answered 502 `replica_error` naming the replica and what it said, and saying the standing is not known to be ended.
// A gateway process on a redis-server of the test's own; the other replica is a peer on the same Redis that
// answers the admin questions as such a release does (a real old build would need the git history at test time).
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { after, before, describe, it } from 'node:test';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { startReplicaFrom, writeEverythingConfig, type Replica } from '../helpers/replicas.js';
import { until } from '../helpers/wait.js';

const TOKEN = 'admin-token-end-modern-error-0123456789';
const ADMIN = `admin: { enabled: true, port: 0, token: "${TOKEN}" }\n`;
const OLD = 'er-old-release';

async function admin(r: Replica, method: string, path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(new URL(path, r.admin), { method, headers: { authorization: `Bearer ${TOKEN}` }, signal: AbortSignal.timeout(30_000) });
  return { status: res.status, body: await res.json() };
}

/** A replica on the admin channels that answers `sessions` with none and every other question with the error an older release gives. */
async function olderReplica(url: string): Promise<{ asked: string[]; stop: () => Promise<void> }> {
  const sub = new Redis(url, { lazyConnect: true });
  const pub = new Redis(url, { lazyConnect: true });
  await Promise.all([sub.connect(), pub.connect()]);
  const asked: string[] = [];
  sub.on('message', (_channel: string, text: string) => {
    const m = JSON.parse(text) as { t: string; id: string; from: string; what: string };
    if (m.t !== 'ask') return;
    asked.push(m.what);
    const answer = m.what === 'sessions' ? { value: [] } : { error: `unknown admin question "${m.what.slice(0, 40)}"` };
    void pub.publish(`swb:admin:${m.from}`, JSON.stringify({ t: 'answer', id: m.id, replica: OLD, ...answer }));
  });
  await sub.subscribe(`swb:admin:${OLD}`, 'swb:admin-all');
  return { asked, stop: async () => void (await Promise.all([sub.quit(), pub.quit()])) };
}

describe('ending a 2026-07-28 standing while a replica answers with an error', { timeout: 120_000 }, () => {
  let redis: TestRedis;
  let asker: Replica | undefined;
  let older: Awaited<ReturnType<typeof olderReplica>> | undefined;
  let log = '';

  before(async () => {
    redis = await startRedis();
    const store = `{ redis: { url: "${redis.url}", heartbeatMs: 200, replicaTtlMs: 2000, forwardTimeoutMs: 5000 } }`;
    asker = await startReplicaFrom('er-asker', writeEverythingConfig('er-asker', { store, extraYaml: ADMIN }));
    asker.child.stdout!.on('data', (b: Buffer) => (log += b.toString()));
    older = await olderReplica(redis.url);
  });
  after(async () => {
    await older?.stop().catch(() => {});
    asker?.child.kill('SIGKILL');
    await redis?.stop();
  });

  it('answers 502 replica_error naming the replica, not 404', async () => {
    const ended = await admin(asker!, 'DELETE', `/sessions/${encodeURIComponent('a-standing-the-older-replica-may-hold')}`);
    assert.ok(older!.asked.includes('end-modern'), 'the older replica was asked');
    assert.equal(ended.status, 502, JSON.stringify(ended.body));
    assert.equal(ended.body.error.code, 'replica_error');
    assert.ok(ended.body.error.message.includes(`${OLD} ("unknown admin question "end-modern"") answered with an error`), ended.body.error.message);
    assert.match(ended.body.error.message, /not known to be ended/);
    await until('the warning in the log', () => /"level":40[^\n]*replica_error|replica_error[^\n]*"level":40/.test(log));
    assert.doesNotMatch(log, /admin API route failed/);
  });

  it('an id no replica holds is still 404 once every replica answers', async () => {
    await older!.stop();
    older = undefined;
    const res = await admin(asker!, 'DELETE', '/sessions/no-such-standing');
    assert.equal(res.status, 404, JSON.stringify(res.body));
  });
});
