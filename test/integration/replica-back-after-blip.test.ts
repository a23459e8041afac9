// A replica whose two Redis connections dropped for a moment (a network blip on its node, CLIENT KILL) is
// found gone by another replica that forwarded to it just then, which is right: it could not be reached.
// Once it is back (reconnected, beating, its inbox subscribed) it is alive again to that replica: its
// sessions are forwarded to it, not taken over while it still holds and serves them (its re-publish
// after the reconnect came first, so it would never learn that another replica holds them too).
import assert from 'node:assert/strict';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { Cluster } from '../../src/cluster/cluster.js';
import { ReplicaDeaths } from '../../src/cluster/replica-deaths.js';
import { startBareReplicas } from '../helpers/bare-replicas.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { sessionRecord } from '../helpers/session-record.js';
import { until } from '../helpers/wait.js';

const PREFIX = 'blip:';
// Long enough that "found gone" would still be believed when the test asks (replicaTtlMs + 2 s).
const cfg = (url: string) => ({ url, keyPrefix: PREFIX, sessionTtlMs: 60_000, heartbeatMs: 200, replicaTtlMs: 10_000, forwardTimeoutMs: 2000 });
/** A response nobody reads (the forward's answer, if it got one, is dropped). */
const detached = () => new ServerResponse(new IncomingMessage(new Socket()));

describe('a replica found gone during a blip of its Redis links', { timeout: 90_000 }, () => {
  let redis: TestRedis;
  let a: Cluster;
  let b: Cluster;
  let admin: Redis;

  before(async () => {
    redis = await startRedis();
    [a, b] = (await startBareReplicas(cfg(redis.url), 2)) as [Cluster, Cluster];
    admin = new Redis(redis.url);
  });
  after(async () => {
    admin?.disconnect();
    await a?.stop();
    await b?.stop();
    await redis?.stop();
  });

  it('is alive again once it beats: its sessions are forwarded to it, not taken over', async () => {
    const rec = sessionRecord();
    await a.open(rec);
    assert.equal((await b.locate(rec.id, false)).kind, 'forward');
    const name = ReplicaDeaths.connectionName(PREFIX, a.replicaId);
    const inbox = ReplicaDeaths.inbox(PREFIX, a.replicaId);
    const subscribers = async () => Number(((await admin.pubsub('NUMSUB', inbox)) as unknown[])[1]);

    // Both of a's links drop; b forwards to a (over the tunnel: a advertises no URL) before they are back,
    // and finds it gone. a reconnects within moments, so this is tried again until b's look fell in the gap.
    let found = false;
    for (let i = 0; i < 50 && !found; i++) {
      await until('a listening', async () => a.healthy && (await subscribers()) === 1, 20_000);
      const ids = [...String(await admin.client('LIST')).matchAll(/id=(\d+) .* name=(\S+)/g)].filter((m) => m[2] === name).map((m) => m[1]!);
      for (const id of ids) await admin.client('KILL', 'ID', id);
      found = (await b.forward(a.replicaId, { method: 'POST', url: '/mcp', headers: { 'mcp-session-id': rec.id }, body: '{}' }, detached)) === 'owner-gone';
    }
    assert.ok(found, 'b never found a gone while its links were down');

    // a is back: connected, listening, and its heartbeat written since.
    await until('a back', async () => a.healthy && (await subscribers()) === 1, 20_000);
    const key = `${PREFIX}replica:${a.replicaId}`;
    const beatBefore = await admin.pttl(key);
    await until('a beat again', async () => (await admin.pttl(key)) > beatBefore, 20_000);
    assert.equal(await admin.get(`${PREFIX}owner:${rec.id}`), a.replicaId, 'a still owns its session');

    assert.equal(await b.alive(a.replicaId), true, 'a replica that beats again is alive');
    const where = await b.locate(rec.id, false);
    assert.equal(where.kind, 'forward', 'the session of a live replica is taken over instead of forwarded to it');
  });
});
