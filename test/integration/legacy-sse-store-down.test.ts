// A legacy HTTP+SSE session asked for while the shared store (Redis) cannot be reached: refused with 503
// and Retry-After, as a Streamable HTTP initialize is (README: new sessions get 503 while Redis is
// unreachable). It was answered 200, its endpoint event sent, and the stream ended a moment later (its
// record could not be written): a client saw a session that vanished, with no word of retrying.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { until } from '../helpers/wait.js';

describe('a legacy SSE stream opened while the shared store is down', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  let gw: RunningGateway;

  before(async () => {
    redis = await startRedis();
    gw = await startGateway({
      store: { redis: { url: redis.url, keyPrefix: 'ssedown:', heartbeatMs: 200, replicaTtlMs: 1000 } },
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
  });
  after(async () => {
    await gw?.close();
    await redis?.stop();
  });

  it('is refused with 503 and Retry-After, and opens once the store is back', async () => {
    await redis.stop();
    await until('the gateway to see the store gone', async () => gw.app.gateway.cluster!.redis.status !== 'ready', 10_000);
    const refused = await fetch(gw.url('/sse'), { headers: { accept: 'text/event-stream' }, signal: AbortSignal.timeout(10_000) });
    const body = await refused.text();
    assert.equal(refused.status, 503, `answered ${refused.status}: ${body}`);
    assert.ok(refused.headers.get('retry-after'), 'says when to retry');
    assert.match(body, /store/);
    await redis.restart();
    await until('the gateway to see the store back', async () => gw.app.gateway.cluster!.redis.status === 'ready', 10_000);
    const ac = new AbortController();
    const opened = await fetch(gw.url('/sse'), { headers: { accept: 'text/event-stream' }, signal: ac.signal });
    assert.equal(opened.status, 200);
    ac.abort();
  });
});
