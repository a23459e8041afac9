// The store changing under a takeover, between the claim and the write of the rebuilt session's record
// (held at the renewal of its upstream subscription by a gate file). Any answer but "written" ended the
// rebuilt copy and told the client 404 (start over): after a FLUSHALL, though the session lived on here
// and the re-publish of a store that lost its data would have put it back; and when another replica owned
// it by then, though it lived on there.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { GatedReplicas } from '../helpers/held-takeover.js';
import { post } from '../helpers/http-edge.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';

const PREFIX = 'changed-test:';

describe('a takeover whose store changed since the claim', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  let group: GatedReplicas;
  before(async () => {
    redis = await startRedis();
    group = new GatedReplicas(redis.url, PREFIX);
  });
  after(async () => {
    await group?.close();
    await redis?.stop();
  });

  it('flushed (lost its data): the session is served, and its record written back as this replica\'s', async () => {
    const { b, s, answer, release } = await group.heldTakeover();
    await group.raw.flushall();
    release();
    const res = await answer;
    assert.equal(res.status, 200, await res.text());
    assert.equal(await group.raw.get(`${PREFIX}owner:${s.sid}`), b.app.gateway.cluster!.replicaId, 'the record is not back, owned by the replica serving it');
    const again = await post(b, { jsonrpc: '2.0', id: 4, method: 'tools/list' }, { sid: s.sid, version: s.version });
    assert.equal(again.status, 200, await again.text());
  });

  it('owned by another replica by now: 503 with Retry-After (not 404), and the retry is served there', async () => {
    const { gw: c } = await group.start();
    const { b, s, answer, release } = await group.heldTakeover();
    // c took it over meanwhile (b looked gone to it: paused past its heartbeat).
    await group.raw.set(`${PREFIX}owner:${s.sid}`, c.app.gateway.cluster!.replicaId);
    release();
    const res = await answer;
    assert.equal(res.status, 503, await res.text());
    assert.ok(res.headers.get('retry-after'), 'no Retry-After');
    assert.equal(b.app.gateway.registry.get(s.sid), undefined, 'b kept a copy of a session c owns');
    const retried = await post(c, { jsonrpc: '2.0', id: 4, method: 'tools/list' }, { sid: s.sid, version: s.version });
    assert.equal(retried.status, 200, await retried.text());
  });
});
