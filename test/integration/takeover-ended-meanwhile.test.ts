// A session ended on the replica taking it over while the copy there is still being rebuilt (its upstream
// subscription renewal held by a gate file). The rebuild carried on as if nothing had happened: ACTIVE,
// counted among the active sessions after its close had run (switchboard_sessions_active stayed +1), and
// a copy handed back by a shutdown meanwhile was answered 404, though another replica could resume it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SHUTDOWN_REASON } from '../../src/session/index.js';
import { GatedReplicas } from '../helpers/held-takeover.js';
import { post } from '../helpers/http-edge.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';

describe('a session ended while another replica rebuilds it', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  let group: GatedReplicas;
  before(async () => {
    redis = await startRedis();
    group = new GatedReplicas(redis.url, 'rebuilt-test:');
  });
  after(async () => {
    await group?.close();
    await redis?.stop();
  });

  it('by an operator (DELETE /sessions/:id): closed once, answered 404, and no longer counted active', async () => {
    const logLines: string[] = [];
    const { b, s, answer, release } = await group.heldTakeover(logLines);
    const ended = await fetch(new URL(`/sessions/${s.sid}`, b.app.adminUrl), { method: 'DELETE' });
    assert.ok(ended.ok, `DELETE /sessions/${s.sid}: HTTP ${ended.status}`);
    release();
    const res = await answer;
    assert.equal(res.status, 404, await res.text());
    const closed = logLines.filter((l) => l.includes('"msg":"session closed"') && l.includes(s.sid));
    assert.equal(closed.length, 1, `closed ${closed.length} times:\n${closed.join('')}`);
    const metrics = await (await fetch(b.app.metricsUrl!)).text();
    const active = /^switchboard_sessions_active\{[^}]*transport="streamable-http"[^}]*\} (\d+)$/m.exec(metrics)?.[1];
    assert.equal(active ?? '0', '0', 'the ended session is still counted active');
    assert.ok(!logLines.some((l) => l.includes('session taken over from another replica')), 'an ended session reported as taken over');
  });

  it('by a shutdown (handed back): answered 503, and the next replica asked resumes it', async () => {
    const { b, s, answer, release } = await group.heldTakeover();
    // What the gateway's shutdown does to each of its sessions (SessionRegistry.closeAll).
    await b.app.gateway.registry.get(s.sid)!.close(SHUTDOWN_REASON);
    release();
    const res = await answer;
    assert.equal(res.status, 503, await res.text());
    assert.ok(res.headers.get('retry-after'), 'no Retry-After');
    const { gw: c } = await group.start();
    const retried = await post(c, { jsonrpc: '2.0', id: 4, method: 'tools/list' }, { sid: s.sid, version: s.version });
    assert.equal(retried.status, 200, await retried.text());
  });

  it('while its upstream never answers the renewal: the request that took it over is answered 404 at once', async () => {
    // The gate stays shut: the upstream holds the renewal for its requestTimeoutMs (60 s, the suite's
    // timeout). The rebuild of a session that ended has nothing left to wait for.
    const { b, s, answer } = await group.heldTakeover();
    const ended = await fetch(new URL(`/sessions/${s.sid}`, b.app.adminUrl), { method: 'DELETE' });
    assert.ok(ended.ok, `DELETE /sessions/${s.sid}: HTTP ${ended.status}`);
    const res = await answer;
    assert.equal(res.status, 404, await res.text());
  });
});
