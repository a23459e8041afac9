// A request claiming to be forwarded by another replica (an x-switchboard-forward header) whose signature
// does not verify is served as an ordinary client's and said at warn: one line per request, to anyone who
// can reach the port, as fast as they send (cluster mode). Now those lines are bounded as other warnings a
// peer causes are (BoundedWarnings: a burst, then 10 a second, the rest counted in one line a second);
// the metric still counts every one. Found by a review.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { everythingUpstream, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { rawPost as post, rawSession as session } from '../helpers/raw-mcp.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { until } from '../helpers/wait.js';

// Timed 1970: refused as expired before any signature is checked.
const FORGED = 'v1,a,b,0,' + '0'.repeat(64);

describe('untrusted forwards in the log', { timeout: 90_000 }, () => {
  let redis: TestRedis;
  let gw: RunningGateway;
  const lines: string[] = [];

  before(async () => {
    redis = await startRedis();
    gw = await startGateway({ store: { redis: { url: redis.url } }, upstreams: [everythingUpstream('everything', 'shared')], endpoints: [{ path: '/mcp', upstreams: ['everything'] }] }, { logLines: lines });
  });
  after(async () => {
    await gw?.close();
    await redis?.stop();
  });

  it('300 forged forward headers: served, counted, and at most a bounded number of warn lines with the rest counted', async () => {
    const sid = await session(gw.base);
    for (let k = 0; k < 300; k++) {
      const r = await post(gw.base, { jsonrpc: '2.0', id: k + 1, method: 'ping' }, sid, { 'x-switchboard-forward': FORGED });
      assert.equal(r.status, 200, r.text);
    }
    const warned = () => lines.filter((l) => l.includes('signature does not verify')).length;
    await until('the dropped lines to be counted', () => lines.some((l) => l.includes('"dropped"') && l.includes('forward')));
    assert.ok(warned() < 250, `${warned()} warn lines for 300 forged headers`);
    const metrics = await (await fetch(gw.app.metricsUrl!)).text();
    assert.match(metrics, /^switchboard_cluster_untrusted_forwards_total\{reason="expired"\} 300$/m);
  });
});
