// With store.redis.forwardSecret set, Redis access alone must not be able to send a client's request
// (its Authorization header included) anywhere: a replica's advertised address was believed if it only
// began with http(s)://, so a session's owner set to a made-up replica whose heartbeat names any host sent
// the request there and streamed its answer back. An advertisement now carries a MAC made with the
// secret; one that does not verify is ignored, and the made-up owner, which nobody hears, is gone.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { rawPost, rawSession } from '../helpers/raw-mcp.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

describe('an advertised address planted in Redis, with forwardSecret set', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  let raw: Redis;
  let gw: RunningGateway;
  let other: RunningGateway;
  let planted: Server;
  let plantedUrl: string;
  const reached: string[] = [];

  before(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
    planted = createServer((req, res) => {
      reached.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: 2, result: { tools: [{ name: 'planted' }] } }));
    });
    await new Promise<void>((r) => planted.listen(0, '127.0.0.1', r));
    plantedUrl = `http://127.0.0.1:${(planted.address() as AddressInfo).port}`;
    const config = {
      store: { redis: { url: redis.url, keyPrefix: 'adv:', forwardSecret: 's'.repeat(40), forwardTimeoutMs: 1000 } },
      upstreams: [{ name: 'fx', transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/conformance-server.mjs'], sandbox: 'none' as const, sharing: 'shared' as const }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    };
    gw = await startGateway(config);
    other = await startGateway(config);
  });
  after(async () => {
    await other?.close();
    await gw?.close();
    planted?.closeAllConnections();
    planted?.close();
    raw?.disconnect();
    await redis?.stop();
  });

  it("a replica's own advertisement verifies: its sessions are forwarded to it over HTTP", async () => {
    const sid = await rawSession(other.base);
    const answer = await rawPost(gw.base, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, sid);
    assert.equal(answer.status, 200, answer.text);
    const text = await (await fetch(gw.app.metricsUrl!)).text();
    assert.match(text, /^switchboard_cluster_forwards_total\{via="http"\} 1$/m);
    assert.doesNotMatch(text, /^switchboard_cluster_forwards_total\{via="redis"\} [1-9]/m);
  });

  it('sends nothing there: the made-up owner is gone and the session is taken over by the replica asked', async () => {
    // Opened on one replica, asked of the other, which reads the session's owner from Redis.
    const sid = await rawSession(other.base);
    await raw.set('adv:replica:fake', plantedUrl, 'PX', 60_000);
    await raw.set(`adv:owner:${sid}`, 'fake');
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    // Bounded: until the gateway's view of the store is settled enough to call the owner gone.
    const answer = await waitFor(async () => {
      const a = await rawPost(gw.base, list, sid);
      return a.status === 200 || reached.length > 0 ? a : undefined;
    }, { timeoutMs: 20_000, intervalMs: 200 });
    assert.deepEqual(reached, [], 'a request reached the planted address');
    assert.ok(answer, 'the session was never answered');
    assert.doesNotMatch(answer.text, /planted/);
    assert.notEqual(await raw.get(`adv:owner:${sid}`), 'fake', 'taken over from the made-up owner');
  });
});
