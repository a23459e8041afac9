// A session's resource subscriptions are kept in its record (in Redis, every replica reads it, and it is
// written whole again on every subscribe): what a client subscribes to is bounded in bytes, not only in
// count, or one client's URIs (a template matches a URI of any length) filled the store.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { everythingUpstream, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { rawPost as post, rawSession as session } from '../helpers/raw-mcp.js';

describe('resource subscriptions in the session record (Redis)', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  let gw: RunningGateway;
  let raw: Redis;

  before(async () => {
    redis = await startRedis();
    gw = await startGateway({ store: { redis: { url: redis.url } }, upstreams: [everythingUpstream('everything', 'shared')], endpoints: [{ path: '/mcp', upstreams: ['everything'] }] });
    raw = new Redis(redis.url);
  });
  after(async () => {
    raw?.disconnect();
    await gw?.close();
    await redis?.stop();
  });

  it('a URI that would take the record past its bound is refused (SWB_SUBSCRIPTION_LIMIT), and the record stays small; ordinary ones still go', async () => {
    const sid = await session(gw.base);
    // server-everything's template demo://resource/dynamic/text/{resourceId} matches a resourceId of any length.
    const huge = `demo://resource/dynamic/text/${'9'.repeat(1_000_000)}`;
    const subscribe = (uri: string, id: number) => post(gw.base, { jsonrpc: '2.0', id, method: 'resources/subscribe', params: { uri } }, sid);
    const refused = await subscribe(huge, 2);
    assert.match(refused.text, /"error"/, refused.text.slice(0, 300));
    assert.match(refused.text, /SWB_SUBSCRIPTION_LIMIT/);
    const ok = await subscribe('demo://resource/dynamic/text/1', 3);
    assert.match(ok.text, /"result":\{\}/, ok.text.slice(0, 300));
    const record = await raw.get(`swb:session:${sid}`);
    assert.ok(record && record.length < 64 * 1024, `the session record is ${record?.length} characters`);
    assert.deepEqual(JSON.parse(record!).subscriptions, ['demo://resource/dynamic/text/1']);
  });
});
