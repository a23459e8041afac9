// The change bus under a flood: a shared upstream that announces the same resource's update thousands of
// times (a file watcher on a busy file, a hostile server) put one Redis PUBLISH per notification on every
// replica's subscriber, and each one waiting on a slow or frozen Redis held its command in ioredis's queue.
// A change already on its way to Redis now stands for the same change announced meanwhile (one more
// publish once it is sent, so the last one is never lost). Real redis-server, real gateway, real upstream.
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { openSession, post } from '../helpers/http-edge.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const FLOOD = { name: 'flood', transport: 'stdio' as const, command: process.execPath, args: [resolve('test/fixtures/flood-server.mjs')], sandbox: 'none' as const, sharing: 'shared' as const };
const PREFIX = 'busflood:';

describe('the change bus under a flood of resources/updated', { timeout: 60_000 }, () => {
  let server: TestRedis;
  let sub: Redis;
  let gw: RunningGateway;
  const heard: string[] = [];

  before(async () => {
    server = await startRedis();
    sub = new Redis(server.url);
    sub.on('message', (_channel: string, text: string) => heard.push(text));
    await sub.subscribe(`${PREFIX}changes`);
    gw = await startGateway({
      store: { redis: { url: server.url, keyPrefix: PREFIX } },
      upstreams: [FLOOD],
      endpoints: [{ path: '/mcp', upstreams: ['flood'] }],
    });
  });

  after(async () => {
    await gw?.close();
    sub?.disconnect();
    await server?.stop();
  });

  it('2,000 updates of one resource are not 2,000 publishes, and the change still reaches the bus', async () => {
    const s = await openSession(gw, '2025-11-25');
    const r = await post(gw, { jsonrpc: '2.0', id: 'f', method: 'tools/call', params: { name: 'flood', arguments: { count: 2000, note: 'updated', oneWrite: true } } }, { sid: s.sid, version: s.version });
    assert.equal(r.status, 200);
    // The answer comes after every notification on the upstream's stdout: all of them were handled.
    assert.match(await r.text(), /flooded 2000/);
    assert.ok(await waitFor(() => heard.length > 0, { timeoutMs: 10_000 }), 'the change reached the bus');
    const change = JSON.parse(heard.at(-1)!);
    assert.equal(change.endpoint, '/mcp');
    assert.equal(change.method, 'notifications/resources/updated');
    assert.deepEqual(change.params, { uri: 'flood://item/0' });
    // The notifications arrive together (oneWrite): a few reads of the pipe, not one per notification. Written
    // one at a time by a server a loaded machine slowed, they arrived as slowly as the publishes went (one
    // each: 212–648 in CI runs), which is coalescing working and no evidence either way.
    assert.ok(heard.length <= 50, `${heard.length} publishes for 2000 updates of one resource`);
  });
});
