// The console's /events stream while the shared store (Redis) cannot be read: its views, which read the
// cluster's state there, cannot be computed. The stream still opens, and sends no frame for a view it
// could not compute (it sent `data: undefined`, which no console can parse: the console's reader stopped
// there for good); once the store is back, the views follow.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { until } from '../helpers/wait.js';

const TOKEN = 'store-down-admin-token-0123456789abcdef';

describe('admin /events while the shared store is down', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  let gw: RunningGateway;
  const logLines: string[] = [];

  before(async () => {
    redis = await startRedis();
    gw = await startGateway({
      admin: { enabled: true, port: 0, token: TOKEN },
      store: { redis: { url: redis.url, keyPrefix: 'evdown:', heartbeatMs: 200, replicaTtlMs: 1000 } },
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    }, { logLines });
  });
  after(async () => {
    await gw?.close();
    await redis?.stop();
  });

  it('sends only frames with data, and the views once the store is back', async () => {
    await redis.stop();
    const abort = new AbortController();
    const res = await fetch(new URL('/events', gw.app.adminUrl!), { headers: { authorization: `Bearer ${TOKEN}` }, signal: abort.signal });
    assert.equal(res.status, 200);
    let text = '';
    const reading = (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of res.body!) text += decoder.decode(chunk as Uint8Array, { stream: true });
      } catch {
        // aborted below
      }
    })();
    try {
      const failed = () => logLines.filter((l) => l.includes('console view could not be computed')).length;
      await until('the views to be tried with the store down', () => failed() >= 4, 20_000);
      const frames = text.split('\n\n').filter((f) => f.includes('data: '));
      for (const f of frames) assert.doesNotThrow(() => JSON.parse(/^data: (.*)$/m.exec(f)![1]!), `every frame's data is JSON: ${JSON.stringify(f)}`);
      assert.ok(!text.includes('event: sessions\n'), `no sessions frame while the store is down:\n${text}`);
      await redis.restart();
      for (const view of ['sessions', 'upstreams', 'tenants', 'pins']) {
        await until(`the ${view} view once the store is back`, () => text.includes(`event: ${view}\n`), 20_000);
        assert.doesNotThrow(() => JSON.parse(new RegExp(`event: ${view}\ndata: (.*)$`, 'm').exec(text)![1]!));
      }
    } finally {
      abort.abort();
      await reading;
    }
  });
});
