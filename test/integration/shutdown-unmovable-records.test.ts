// A replica that stops hands over the sessions another replica can take over (their record kept, its
// owner released) and ends the others: a session of a per-session upstream, whose state died with the
// process, is answered 404 anywhere afterwards, so its record goes with it. Before, its record was
// released like a movable one's: kept in Redis for sessionTtlMs (an hour) and listed by every replica's
// admin API as an open session awaiting the next request's replica, which could only answer 404.
// Two gateways on loopback sharing a real redis-server.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { everythingUpstream, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { rawPost as post, rawSession as session } from '../helpers/raw-mcp.js';

const TOKEN = 'admin-token-for-unmovable-records-0123456789';

describe('a stopping replica and the sessions that cannot move', { timeout: 90_000 }, () => {
  let redis: TestRedis;
  let a: RunningGateway | undefined;
  let b: RunningGateway;
  let raw: Redis;

  before(async () => {
    redis = await startRedis();
    const config = {
      store: { redis: { url: redis.url } },
      admin: { enabled: true, port: 0, token: TOKEN },
      upstreams: [everythingUpstream('solo', 'per-session'), everythingUpstream('shared', 'shared')],
      endpoints: [
        { path: '/mcp', upstreams: ['solo'] },
        { path: '/moving', upstreams: ['shared'] },
      ],
    };
    a = await startGateway(config);
    b = await startGateway(config);
    raw = new Redis(redis.url);
  });
  after(async () => {
    raw?.disconnect();
    await a?.close();
    await b?.close();
    await redis?.stop();
  });

  it("the per-session session's record is removed, the movable one's released, and B's admin API lists only the latter", async () => {
    const fixed = await session(a!.base);
    const init = await fetch(new URL('/moving', a!.base), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
    assert.equal(init.status, 200, await init.text());
    const moving = init.headers.get('mcp-session-id')!;
    assert.ok(await raw.exists(`swb:session:${fixed}`), 'the per-session session has its record while it lives');

    await a!.close(); // the graceful stop SIGTERM starts
    a = undefined;

    assert.equal(await raw.exists(`swb:session:${fixed}`), 0, 'its record went with it');
    assert.equal(await raw.get(`swb:owner:${moving}`), '', 'the movable one is handed over (released)');
    const res = await fetch(new URL('/sessions', b.app.adminUrl), { headers: { authorization: `Bearer ${TOKEN}` } });
    const ids = ((await res.json()) as { items: Array<{ id: string }> }).items.map((s) => s.id);
    assert.ok(ids.includes(moving), `the handed-over session is listed: ${JSON.stringify(ids)}`);
    assert.ok(!ids.includes(fixed), `the ended one is not: ${JSON.stringify(ids)}`);
    // What its client gets, on the replica left: not found, re-initialize.
    assert.equal((await post(b.base, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, fixed)).status, 404);
  });
});
