// A takeover the replica's registry refuses (it holds session.maxSessions already, or it is shutting
// down) must not leave the session owned by that replica. It did: the claim (owner := this replica) was
// made before the registry refused, so every other replica then forwarded the session's requests to the
// one that could not hold it, and got its refusal — until a slot freed there, or it exited.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { openSession, post } from '../helpers/http-edge.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';

describe('a takeover refused by the replica that tried it', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  let raw: Redis;
  const gateways: RunningGateway[] = [];
  const config = (session: Record<string, unknown> = {}) => ({
    store: { redis: { url: redis.url, keyPrefix: 'refused-test:', heartbeatMs: 200, replicaTtlMs: 1000 } },
    session,
    upstreams: [{ name: 'fixture', transport: 'stdio' as const, ...FIXTURE, sharing: 'shared' as const }],
    endpoints: [{ path: '/mcp', upstreams: ['fixture'] }],
  });
  const start = async (session: Record<string, unknown> = {}) => {
    const gw = await startGateway(config(session));
    gateways.push(gw);
    return gw;
  };
  const call = (gw: RunningGateway, s: { sid: string; version: string }, id: number) =>
    post(gw, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'test_simple_text', arguments: {} } }, { sid: s.sid, version: s.version });

  before(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
  });
  after(async () => {
    raw?.disconnect();
    for (const gw of gateways.reverse()) await gw.close().catch(() => {});
    await redis?.stop();
  });

  it('by a full replica: the session stays free, and the next replica asked takes it over', async () => {
    const owner = await start();
    const full = await start({ maxSessions: 1 });
    const other = await start();
    await openSession(full); // its one session
    const s = await openSession(owner);
    await owner.close(); // hands its sessions over: the next request anywhere takes this one over
    const refused = await call(full, s, 2);
    assert.equal(refused.status, 503, await refused.text());
    assert.notEqual(await raw.get(`refused-test:owner:${s.sid}`), full.app.gateway.cluster!.replicaId, 'the full replica kept the session it could not hold');
    const retried = await call(other, s, 3);
    const body = await retried.text();
    assert.equal(retried.status, 200, body);
    assert.match(body, /This is a simple text response/);
  });

  it('by a replica shutting down: the session stays free, and the next replica asked takes it over', async () => {
    const owner = await start();
    const draining = await start();
    const other = await start();
    const s = await openSession(owner);
    await owner.close();
    // The drain of a graceful stop: new sessions (takeovers included) are refused from its start on.
    draining.app.gateway.registry.refuseNew();
    const refused = await call(draining, s, 2);
    assert.equal(refused.status, 503, await refused.text());
    assert.notEqual(await raw.get(`refused-test:owner:${s.sid}`), draining.app.gateway.cluster!.replicaId, 'the stopping replica kept the session it could not hold');
    const retried = await call(other, s, 3);
    const body = await retried.text();
    assert.equal(retried.status, 200, body);
    assert.match(body, /This is a simple text response/);
  });
});
