// A tenant's request rate across replicas (shared counters in Redis): a request sent to a replica that
// does not own its session is forwarded to the owner, and must be counted once, by the front door the
// client knocked at. The owner's front door counted it again, so a client whose session lived on
// another replica got half its tenant's rate. Both forwarding paths: the tunnel through Redis, and a
// signed HTTP request to the owner's advertised address (whose signature only the body can prove).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { everythingUpstream, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { rawPost as post, RAW_INIT as INIT } from '../helpers/raw-mcp.js';

for (const path of ['tunnel', 'http'] as const) {
  describe(`the tenant's rate of requests forwarded to the session's owner (${path})`, { timeout: 90_000 }, () => {
    let redis: TestRedis;
    let owner: RunningGateway;
    let other: RunningGateway;
    let sid = '';

    before(async () => {
      redis = await startRedis();
      // A burst of 6 and a rate that adds no token during the test.
      // The tunnel: the owner advertises an address nothing listens at, so the other replica forwards through Redis.
      const config = (walled = false) => ({
        store: { redis: { url: redis.url, ...(walled ? { advertiseUrl: 'http://127.0.0.1:1' } : {}) } },
        tenants: [{ name: 'anonymous', endpoints: ['*'], limits: { requestsPerSecond: 0.001, burst: 6 } }],
        upstreams: [everythingUpstream('everything', 'shared')],
        endpoints: [{ path: '/mcp', upstreams: ['everything'] }],
      });
      owner = await startGateway(config(path === 'tunnel'));
      other = await startGateway(config());
    });
    after(async () => {
      await other?.close();
      await owner?.close();
      await redis?.stop();
    });

    it('counts each forwarded request once: the burst left after the session opened is all served', async () => {
      const init = await post(owner.base, INIT);
      assert.equal(init.status, 200, init.text);
      assert.equal((await post(owner.base, { jsonrpc: '2.0', method: 'notifications/initialized' }, init.sid!)).status, 202);
      // One of the six tokens taken (initialize; a notification takes none): five calls through the other
      // replica are served, the sixth is not.
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await post(other.base, { jsonrpc: '2.0', id: 10 + i, method: 'tools/call', params: { name: 'echo', arguments: { message: `m${i}` } } }, init.sid!)).status);
      assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429]);
      sid = init.sid!;
    });

    it('a client that only says its request was forwarded (a forward header that does not verify) still pays the rate', async () => {
      const forged = await post(owner.base, { jsonrpc: '2.0', id: 20, method: 'tools/call', params: { name: 'echo', arguments: { message: 'free?' } } }, sid, { 'x-switchboard-forward': 'v1,someone,0,forged' });
      assert.equal(forged.status, 429, forged.text);
    });
  });
}
