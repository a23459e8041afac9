// A forwarded request whose live owner takes longer than store.redis.forwardTimeoutMs to start its answer
// (a slow tools/call with server.responseMode json, whose headers come with the result) was answered
// 503 "did not answer; retry" while the owner kept running it: the client lost the result, and its retry
// ran the call a second time. A live owner (heartbeat current) is now waited for; only a silent one is
// given up on.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { everythingUpstream, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { rawPost as post, rawSession as session } from '../helpers/raw-mcp.js';

const slow = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'trigger-long-running-operation', arguments: { duration: 2.5, steps: 1 } } });

describe('a forward whose live owner answers after forwardTimeoutMs', { timeout: 90_000 }, () => {
  let redis: TestRedis;
  let owner: RunningGateway;
  let walled: RunningGateway;
  let other: RunningGateway;

  before(async () => {
    redis = await startRedis();
    const config = (extra: Record<string, unknown> = {}) => ({
      server: { responseMode: 'json' as const },
      store: { redis: { url: redis.url, forwardTimeoutMs: 1000, ...extra } },
      upstreams: [everythingUpstream('everything', 'shared')],
      endpoints: [{ path: '/mcp', upstreams: ['everything'] }],
    });
    owner = await startGateway(config());
    // Reached over the Redis tunnel: its advertised address takes no connections.
    walled = await startGateway(config({ advertiseUrl: 'http://127.0.0.1:1' }));
    other = await startGateway(config());
  });
  after(async () => {
    await other?.close();
    await walled?.close();
    await owner?.close();
    await redis?.stop();
  });

  it('over HTTP: the client gets the result, not a 503 inviting a second run', async () => {
    const sid = await session(owner.base);
    const r = await post(other.base, slow(2), sid);
    assert.equal(r.status, 200, r.text);
    assert.match(r.text, /Long running operation completed/);
  });

  it('over the Redis tunnel: the same', async () => {
    const sid = await session(walled.base);
    const r = await post(other.base, slow(3), sid);
    assert.equal(r.status, 200, r.text);
    assert.match(r.text, /Long running operation completed/);
  });
});
