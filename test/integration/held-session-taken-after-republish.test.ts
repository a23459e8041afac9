// A session taken over by another replica after the last write that would tell its old owner (the old owner
// re-published it on reconnecting after a blip, then the replica that had found it gone claimed it): the
// old owner lets its copy go at its next renewal, rather than serving it beside the new owner's for as long
// as nothing changes its record.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Cluster } from '../../src/cluster/cluster.js';
import { startBareReplicas } from '../helpers/bare-replicas.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { sessionRecord } from '../helpers/session-record.js';
import { waitFor } from '../helpers/wait.js';

// Renewals every sessionTtlMs / 3 (1 s here).
const cfg = (url: string) => ({ url, keyPrefix: 'kept:', sessionTtlMs: 3000, heartbeatMs: 200, replicaTtlMs: 1000, forwardTimeoutMs: 2000 });

describe('a held session claimed by another replica with nothing left to tell its old owner', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  let a: Cluster;
  let b: Cluster;

  before(async () => {
    redis = await startRedis();
    [a, b] = (await startBareReplicas(cfg(redis.url), 2)) as [Cluster, Cluster];
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await redis?.stop();
  });

  it('is let go by the old owner at its next renewal', async () => {
    const lost: Array<[string, string]> = [];
    a.onLost = (ids, why) => lost.push(...ids.map((id) => [id, why] as [string, string]));
    const rec = sessionRecord();
    const other = sessionRecord();
    await a.open(rec);
    await a.open(other);
    assert.equal(await b.claim(rec.id, a.replicaId), true);
    const told = await waitFor(() => lost.length > 0, { timeoutMs: 15_000 });
    assert.ok(told, 'the old owner never let its copy go: two replicas serve the session');
    assert.deepEqual(lost, [[rec.id, 'taken']]);
    // Its other session, still its own, is renewed and kept.
    assert.equal((await b.locate(other.id, false)).kind, 'forward');
  });
});
