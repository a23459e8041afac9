// A request forwarded over the Redis tunnel runs through the owner's own routes with the client's Host
// header, as one forwarded over HTTP does: the tunnel dropped it, so the owner saw Fastify inject's
// "localhost:80" and, with server.allowedHosts set, refused every tunnelled request 403 (and, without
// server.publicUrl, named localhost:80 in its WWW-Authenticate and metadata URLs).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { everythingUpstream, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { rawPost as post, RAW_INIT as INIT } from '../helpers/raw-mcp.js';

describe('the Redis tunnel keeps the client\'s Host', { timeout: 90_000 }, () => {
  let redis: TestRedis;
  let walled: RunningGateway;
  let other: RunningGateway;

  before(async () => {
    redis = await startRedis();
    const config = (extra: Record<string, unknown> = {}) => ({
      // Only the address the test's clients use: any other Host is refused.
      server: { allowedHosts: ['127.0.0.1'] },
      store: { redis: { url: redis.url, ...extra } },
      upstreams: [everythingUpstream('everything', 'shared')],
      endpoints: [{ path: '/mcp', upstreams: ['everything'] }],
    });
    // Alive by Redis, but its advertised address takes no connections: forwards to it take the tunnel.
    walled = await startGateway(config({ advertiseUrl: 'http://127.0.0.1:1' }));
    other = await startGateway(config());
  });
  after(async () => {
    await other?.close();
    await walled?.close();
    await redis?.stop();
  });

  it('a request tunnelled to the owner of its session is served there, not refused for a Host the client never sent', async () => {
    const init = await post(walled.base, INIT);
    assert.equal(init.status, 200, init.text);
    const sid = init.sid!;
    assert.equal((await post(walled.base, { jsonrpc: '2.0', method: 'notifications/initialized' }, sid)).status, 202);
    const r = await post(other.base, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message: 'through the tunnel' } } }, sid);
    assert.equal(r.status, 200, r.text);
    assert.match(r.text, /Echo: through the tunnel/);
  });
});
