import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { Cluster } from '../../src/cluster/cluster.js';
import type { GatewayError } from '../../src/errors.js';
import { createLogger } from '../../src/observability/logger.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { sessionRecord } from '../helpers/session-record.js';
import { until } from '../helpers/wait.js';

// Two replicas' Clusters on one redis-server of the test's own: what one of them writes or deletes about a
// session must not undo what the other did since (took the session over, ended it).

const record = sessionRecord;

describe('session records shared by two replicas', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  let a: Cluster;
  let b: Cluster;
  let raw: Redis;

  before(async () => {
    redis = await startRedis();
    const cfg = { url: redis.url, keyPrefix: 'o:', sessionTtlMs: 60_000, heartbeatMs: 200, replicaTtlMs: 1000, forwardTimeoutMs: 2000 };
    const noRoutes = async (): Promise<never> => {
      throw new Error('no local routes in this test');
    };
    a = new Cluster(cfg, { perStream: 10, bytesPerSession: 1 << 20 }, createLogger('silent'));
    b = new Cluster(cfg, { perStream: 10, bytesPerSession: 1 << 20 }, createLogger('silent'));
    await a.start(noRoutes, 65536);
    await b.start(noRoutes, 65536);
    raw = new Redis(redis.url);
  });
  after(async () => {
    raw?.disconnect();
    await a?.stop();
    await b?.stop();
    await redis?.stop();
  });

  const stored = async (id: string) => ({ record: await raw.get(`o:session:${id}`), owner: await raw.get(`o:owner:${id}`) });

  it('a replica whose copy of a session ends (idle, a DELETE it served) leaves the record of the replica that took it over', async () => {
    const r = record();
    await a.open(r);
    assert.equal(await b.claim(r.id, a.replicaId), true, 'b takes the session over (a was paused past its heartbeat)');
    await a.ended(r.id, false); // a resumes, and its stale copy ends
    const after = await stored(r.id);
    assert.equal(after.owner, b.replicaId, "b still owns the session: a's end deleted b's record");
    assert.deepEqual(JSON.parse(after.record ?? 'null'), r);
  });

  it('removing a record names the owner it found: a replica that took the session over since keeps it (the admin API ending a dead owner\'s session)', async () => {
    const r = record();
    await a.open(r);
    assert.equal(await b.claim(r.id, a.replicaId), true);
    assert.equal(await b.store.remove(r.id, a.replicaId), false, 'nothing removed: a no longer owns it');
    assert.equal((await stored(r.id)).owner, b.replicaId, 'the record of the new owner was removed');
    assert.equal(await b.store.remove(r.id, b.replicaId), true);
    assert.deepEqual(await stored(r.id), { record: null, owner: null });
    await a.ended(r.id, false); // a's copy, for the tests after
  });

  it('a write of a session\'s state after another replica ended it (the admin API, its owner read as gone) does not bring it back: the copy here ends', async () => {
    const r = record();
    const lost: string[] = [];
    a.onLost = (ids) => lost.push(...ids);
    await a.open(r);
    assert.deepEqual(await b.endElsewhere(r.id), { endedBy: b.replicaId, holder: a.replicaId });
    await a.record({ ...r, subscriptions: ['file:///x'] });
    assert.deepEqual(await stored(r.id), { record: null, owner: null }, 'the session ended elsewhere is stored again');
    assert.deepEqual(lost, [r.id], 'the copy here is told its session ended');
    a.onLost = () => {};
  });

  it('a session ended after a replica read it as free (released on shutdown) cannot be claimed: its takeover would bring it back', async () => {
    const r = record();
    await a.open(r);
    await a.ended(r.id, true); // a shuts down and hands the session over: b reads it as free
    assert.deepEqual(await b.endElsewhere(r.id), { endedBy: b.replicaId, holder: null }, 'the admin API ends it meanwhile');
    assert.equal(await b.claim(r.id, ''), false, 'the ended session was claimed');
    assert.deepEqual(await stored(r.id), { record: null, owner: null });
  });

  it("a replica whose copy of a session ends leaves the event log of the replica that took it over; its own session's log goes", async () => {
    const [r, mine] = [record(), record()];
    await a.open(r);
    await a.open(mine);
    a.events.append(r.id, 0, 1, 'before the takeover');
    a.events.append(mine.id, 0, 1, 'x');
    assert.equal(await b.claim(r.id, a.replicaId), true);
    b.events.append(r.id, 0, 2, 'after the takeover');
    await b.redis.ping();
    // a's stale copy ends (idle, a DELETE it served): the session registry drops its log, then the cluster forgets it.
    for (const id of [r.id, mine.id]) {
      a.events.dropSession(id);
      await a.ended(id, false);
    }
    await a.redis.ping(); // what a sent before has been carried out (one connection, in order)
    await a.redis.ping();
    assert.deepEqual(await b.events.replay(r.id, 0, 0), [{ seq: 1, data: 'before the takeover' }, { seq: 2, data: 'after the takeover' }], "b's event log was dropped: its client cannot resume");
    assert.equal(await a.events.replay(mine.id, 0, 0), undefined, 'the log of a session that ended where it was owned is dropped');
  });

  it("a replica that has not yet learned its session was taken over does not log events into it: the new owner's event ids name the new owner's events", async () => {
    const r = record();
    await a.open(r);
    a.events.append(r.id, 0, 1, 'a: 0_1, before the takeover');
    await a.redis.ping(); // logged (one connection, in order)
    assert.equal(await b.claim(r.id, a.replicaId), true, 'b takes the session over (a was paused past its heartbeat)');
    // b's standalone stream continues after what the log holds (StreamableSessionTransport.continueFrom).
    const from = await b.events.lastSeq!(r.id, 0);
    assert.equal(from, 1);
    b.events.append(r.id, 0, from + 1, 'b: 0_2');
    // a resumes and, until it learns the session moved, its copy goes on numbering its own standalone stream.
    a.events.append(r.id, 0, 2, 'a, stale: 0_2');
    a.events.append(r.id, 0, 3, 'a, stale: 0_3');
    await a.redis.ping();
    await b.redis.ping();
    assert.deepEqual(await b.events.replay(r.id, 0, 0), [{ seq: 1, data: 'a: 0_1, before the takeover' }, { seq: 2, data: 'b: 0_2' }], "the stale copy's events are in the new owner's log, under ids the new owner gives its own");
    assert.equal(await b.events.lastSeq!(r.id, 0), 2, "a client resuming after b's 0_2 would skip b's next events, or get a's");
    await a.ended(r.id, false);
    await b.ended(r.id, false);
  });

  it('a replica whose heartbeat lapsed does not write back a session another replica ended meanwhile: its copy ends', async () => {
    const [r, kept] = [record(), record()];
    const lost: string[] = [];
    a.onLost = (ids, why) => lost.push(...ids.map((id) => `${id}: ${why}`));
    await a.open(r);
    await a.open(kept);
    // A pause past the heartbeat, as Redis sees it: a's heartbeat lapsed, and another replica's admin API,
    // finding a gone, ended r (removed its record). a beats again on its own timer.
    await raw.multi().del(`o:replica:${a.replicaId}`).del(`o:session:${r.id}`, `o:owner:${r.id}`).exec();
    await until('a re-published or let the session go', async () => lost.length > 0 || (await stored(r.id)).record !== null);
    assert.deepEqual(await stored(r.id), { record: null, owner: null }, 'the session ended elsewhere was written back');
    assert.deepEqual(lost, [`${r.id}: ended`]);
    assert.equal((await stored(kept.id)).owner, a.replicaId, 'the sessions still its own stay');
    a.onLost = () => {};
    await a.ended(kept.id, false);
  });

  it('a session ended while another replica rebuilt it after its claim (the admin API ending it there) is not written back by that takeover', async () => {
    const r = record();
    await a.open(r);
    assert.equal(await b.claim(r.id, a.replicaId), true, 'b takes the session over');
    await b.ended(r.id, false); // ended on b (the admin API asked b, its owner now) while b renewed its upstream subscriptions
    const held = await b.hold(r);
    assert.deepEqual(await stored(r.id), { record: null, owner: null }, 'the takeover wrote the ended session back');
    assert.equal(held, 'ended', 'the takeover says the session is gone');
    await a.ended(r.id, false);
    const live = record();
    await a.open(live);
    assert.equal(await b.claim(live.id, a.replicaId), true);
    assert.equal(await b.hold({ ...live, logLevel: 'info' }), 'held', 'a takeover of a live session writes its record');
    assert.equal(JSON.parse((await stored(live.id)).record ?? '{}').logLevel, 'info');
    await a.ended(live.id, false);
    await b.ended(live.id, false);
  });

  it('a write of a session\'s state that arrives after it ended here (a request that was in flight) does not bring its record back', async () => {
    const r = record();
    const witness = record();
    await a.open(r);
    await a.open(witness);
    await a.record({ ...witness, logLevel: 'debug' });
    assert.equal(JSON.parse((await stored(witness.id)).record ?? '{}').logLevel, 'debug', 'a live session held here is written');
    await a.ended(r.id, false); // a DELETE, the idle expiry
    await a.record({ ...r, logLevel: 'debug' }); // the late write of a logging/setLevel answered meanwhile
    assert.deepEqual(await stored(r.id), { record: null, owner: null }, 'the ended session is stored again: resumable and listed');
    // Nor is it kept among the sessions held here: a store that lost its data gets back only the live ones.
    await raw.flushall();
    await until('the witness re-published', async () => (await stored(witness.id)).owner === a.replicaId);
    assert.deepEqual(await stored(r.id), { record: null, owner: null }, 'the ended session was re-published');
    await a.ended(witness.id, false);
  });
});

// The admin API of one replica ending a session another holds (Cluster.endElsewhere): it reads the owner,
// asks it, and removes the record only while that owner still owns it. The session moving on between the
// read and the removal is made deterministic by the owners' own answers: each one's admin-channel hook
// (what the gateway answers with, ending its local copy) lets another replica claim the session before it
// answers, as a replica paused past its heartbeat finds its copy taken over when it resumes.
describe('the admin API ending a session that moves between replicas meanwhile', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  let a: Cluster;
  let b: Cluster;
  let c: Cluster;
  let raw: Redis;
  /** What each replica does when another's admin API asks it to end a session (per test). */
  const hooks = new Map<Cluster, (id: string) => Promise<boolean>>();
  const asked: string[] = [];

  before(async () => {
    redis = await startRedis();
    const cfg = { url: redis.url, keyPrefix: 'm:', sessionTtlMs: 60_000, heartbeatMs: 200, replicaTtlMs: 1000, forwardTimeoutMs: 5000 };
    const noRoutes = async (): Promise<never> => {
      throw new Error('no local routes in this test');
    };
    [a, b, c] = [0, 1, 2].map(() => new Cluster(cfg, { perStream: 10, bytesPerSession: 1 << 20 }, createLogger('silent'))) as [Cluster, Cluster, Cluster];
    for (const [name, replica] of [['a', a], ['b', b], ['c', c]] as const) {
      await replica.start(noRoutes, 65536);
      await replica.onAdminEnd(async (id) => {
        asked.push(name);
        return (await hooks.get(replica)?.(id)) ?? false;
      });
    }
    raw = new Redis(redis.url);
  });
  after(async () => {
    raw?.disconnect();
    for (const replica of [a, b, c]) await replica?.stop();
    await redis?.stop();
  });

  const stored = async (id: string) => ({ record: await raw.get(`m:session:${id}`), owner: await raw.get(`m:owner:${id}`) });

  it('asks the new owner when the owner it read no longer holds the session (taken over meanwhile): the new owner ends it', async () => {
    const r = record();
    asked.length = 0;
    await a.open(r);
    // a answers that it holds no such session: c took it over before a's answer (a's copy was let go).
    hooks.set(a, async (id) => {
      assert.equal(await c.claim(id, a.replicaId), true);
      assert.equal(await c.hold(r), 'held');
      return false;
    });
    hooks.set(c, async (id) => {
      await c.ended(id, false);
      return true;
    });
    assert.deepEqual(await b.endElsewhere(r.id), { endedBy: c.replicaId, holder: c.replicaId }, 'the new owner ended it');
    assert.deepEqual(asked, ['a', 'c']);
    assert.deepEqual(await stored(r.id), { record: null, owner: null });
  });

  it('answers 503 (retry) when the session moved again before the second removal, and leaves its owner the record', async () => {
    const r = record();
    asked.length = 0;
    await a.open(r);
    hooks.set(a, async (id) => {
      assert.equal(await c.claim(id, a.replicaId), true);
      return false;
    });
    // c too answers that it no longer holds it: a took it back (each one's copy moved on before it answered).
    hooks.set(c, async (id) => {
      assert.equal(await a.claim(id, c.replicaId), true);
      return false;
    });
    await assert.rejects(b.endElsewhere(r.id), (err: GatewayError) => err.code === 'SWB_STORE_UNAVAILABLE' && err.status === 503 && /retry/.test(err.message));
    assert.deepEqual(asked, ['a', 'c'], 'asked the owner read first, then the one read on the retry, and no more');
    assert.equal((await stored(r.id)).owner, a.replicaId, 'the record of the replica that owns the session now was removed');
    hooks.clear();
    await a.ended(r.id, false);
  });
});
