// A replica stopping hands its sessions over (releases their ownership). When that write fails (its link
// to Redis broken at that moment) and so does the removal of its heartbeat, the records stay owned by the
// stopped replica and its heartbeat key lives on for replicaTtlMs. The sessions are not lost nor stuck that
// long: the next request for one finds the owner gone by Redis's evidence (no inbox subscriber, no
// connection of its name) and is taken over at once. A review's question, answered by this test.
import assert from 'node:assert/strict';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Cluster } from '../../src/cluster/cluster.js';
import { startBareReplicas } from '../helpers/bare-replicas.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { sessionRecord } from '../helpers/session-record.js';

// A heartbeat that outlives the test: what moves the session must not be its lapse.
const cfg = (url: string) => ({ url, keyPrefix: 'giveback:', sessionTtlMs: 120_000, heartbeatMs: 1000, replicaTtlMs: 120_000, forwardTimeoutMs: 2000 });

describe('a stopping replica whose hand-over fails', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  let stopping: Cluster;
  let other: Cluster;

  before(async () => {
    redis = await startRedis();
    [stopping, other] = (await startBareReplicas(cfg(redis.url), 2)) as [Cluster, Cluster];
  });
  after(async () => {
    await other?.stop();
    await redis?.stop();
  });

  it('leaves its sessions to be taken over at their next request, not after replicaTtlMs', async () => {
    const rec = sessionRecord();
    await stopping.open(rec);
    stopping.redis.disconnect(); // its command link breaks: the release and the heartbeat's removal fail
    await stopping.ended(rec.id, true);
    await stopping.stop();
    const where = await other.locate(rec.id, false);
    assert.equal(where.kind, 'forward', 'its heartbeat lives on');
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', arguments: {} } });
    const detached = () => new ServerResponse(new IncomingMessage(new Socket()));
    const sent = await other.forward(stopping.replicaId, { method: 'POST', url: '/mcp', headers: { 'mcp-session-id': rec.id }, body }, detached);
    assert.equal(sent, 'owner-gone', 'the stopped owner is known gone at once');
    assert.equal(await other.claim(rec.id, stopping.replicaId), true, 'taken over');
  });
});
