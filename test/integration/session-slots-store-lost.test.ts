// A tenant's limits.sessions kept in Redis holds after the store lost its data (restarted without
// persistence, flushed, failed over to an empty replica): the replica re-publishes the session slots it
// holds, as it re-publishes their records. Before, the slots were gone and never written again (a renewal
// only updates a slot still there), so a tenant at its limit could open as many sessions again, and one
// more set after each loss, for as long as its sessions lived. Real redis-server, restarted empty.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { until } from '../helpers/wait.js';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } });

describe("the tenant's session limit after Redis lost its data", { timeout: 60_000 }, () => {
  let redis: TestRedis;
  let gw: RunningGateway;

  before(async () => {
    redis = await startRedis();
    gw = await startGateway({
      session: { idleTimeoutMs: 600_000 },
      tenants: [{ name: 'anonymous', endpoints: ['*'], limits: { sessions: 2 } }],
      store: { redis: { url: redis.url, keyPrefix: 'slots-lost:', heartbeatMs: 200, replicaTtlMs: 1000 } },
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
  });
  after(async () => {
    await gw?.close();
    await redis?.stop();
  });

  const initialize = async () => {
    const res = await fetch(gw.url(), { method: 'POST', headers: HEADERS, body: INIT });
    await res.text();
    return res.status;
  };
  const ready = async () => {
    const res = await fetch(new URL('/readyz', gw.base));
    await res.text();
    return res.status === 200;
  };

  it('counts the sessions it held before: the tenant at its limit is still refused', async () => {
    assert.equal(await initialize(), 200);
    assert.equal(await initialize(), 200);
    assert.equal(await initialize(), 429, 'the tenant holds its two sessions');
    await redis.restart(); // empty: no persistence
    await until('the replica re-published what it holds', ready, 20_000);
    assert.equal(await initialize(), 429, 'its two sessions still count');
  });
});
