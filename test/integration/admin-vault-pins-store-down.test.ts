// The admin API's pins and links while Redis (which holds them with store.redis) is unreachable. They
// were answered 500 "internal" with ioredis's message, and an error line with a stack ("admin API route
// failed"), as if the gateway were broken; the other store-bound views answer 503 "unavailable", which
// says what an operator (or the console) should do: retry once the store is back. Real gateway, real
// redis-server, stopped.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';

const TOKEN = 'admin-vault-pins-store-down-0123456789abcdef';

describe('admin pins and links while Redis is down', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  let gw: RunningGateway;
  const lines: string[] = [];

  before(async () => {
    redis = await startRedis();
    gw = await startGateway(
      {
        admin: { enabled: true, port: 0, token: TOKEN },
        store: { redis: { url: redis.url, keyPrefix: 'vpdown:', heartbeatMs: 200, replicaTtlMs: 1000 } },
        vault: { key: Buffer.alloc(32, 7).toString('base64') },
        pinning: { mode: 'withhold' },
        upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared', pool: { size: 1 } }],
        endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
      },
      { logLines: lines },
    );
  });
  after(async () => {
    await gw?.close();
    await redis?.stop();
  });

  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(new URL(path, gw.app.adminUrl!), {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  it('answers 503 "unavailable", not 500 "internal", and logs no error', async () => {
    assert.equal((await admin('GET', '/links')).status, 200);
    assert.equal((await admin('GET', '/pins')).status, 200);
    await redis.stop();
    const asked: Array<[string, string, unknown?]> = [
      ['GET', '/links'],
      ['DELETE', '/links/fx?subject=bob'],
      ['GET', '/pins'],
      ['POST', '/pins/fx/approve', { tools: [{ tool: 'echo', hash: 'a'.repeat(64) }] }],
    ];
    for (const [method, path, body] of asked) {
      const r = await admin(method, path, body);
      assert.equal(r.status, 503, `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error.code, 'unavailable', `${method} ${path}: ${JSON.stringify(r.body)}`);
    }
    const errors = lines.filter((l) => (JSON.parse(l) as { level: number }).level >= 50);
    assert.deepEqual(errors, [], 'error lines');
  });
});
