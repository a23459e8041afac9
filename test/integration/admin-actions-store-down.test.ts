// The admin API's actions while Redis is down. A reload or a restart is applied on the replica asked
// first and then put to the other replicas over Redis; with Redis gone that second step failed and the
// whole action was answered 500 "internal" (an ioredis message), though this replica had applied it:
// an operator read a reload that went through as one that failed. The answer is now this replica's
// report, with why the others were not asked; the views that need the others answer 503 as the
// store-bound ones do. Real gateway from a real file, real redis-server.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileGateway, type FileGateway } from '../helpers/file-gateway.js';
import { FIXTURE } from '../helpers/gateway.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';

const TOKEN = 'admin-actions-store-down-token-0123456789';

function doc(redisUrl: string, endpoints: string[]): Record<string, unknown> {
  return {
    server: { host: '127.0.0.1', port: 0 },
    metrics: { enabled: false },
    logging: { level: process.env.LOG_LEVEL ?? 'silent' },
    admin: { enabled: true, port: 0, token: TOKEN },
    store: { redis: { url: redisUrl, keyPrefix: 'actdown:', heartbeatMs: 200, replicaTtlMs: 1000 } },
    upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared', pool: { size: 1 } }],
    endpoints: endpoints.map((path) => ({ path, upstreams: ['fx'] })),
  };
}

describe('admin actions while Redis is down', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  let fg: FileGateway;

  before(async () => {
    redis = await startRedis();
    fg = await fileGateway('swb-admin-actions-down-', doc(redis.url, ['/mcp']));
  });
  after(async () => {
    await fg?.close();
    await redis?.stop();
  });

  const admin = async (method: string, path: string) => {
    const res = await fetch(new URL(path, fg.app.adminUrl!), { method, headers: { authorization: `Bearer ${TOKEN}` } });
    return { status: res.status, body: (await res.json()) as any };
  };

  it("answers a reload and a restart with this replica's report, and the cluster views with 503", async () => {
    await redis.stop();
    fg.write(doc(redis.url, ['/mcp', '/more']));
    const reload = await admin('POST', '/reload');
    assert.equal(reload.status, 200, JSON.stringify(reload.body));
    assert.equal(reload.body.result, 'applied');
    assert.match(reload.body.replicasError, /unreachable/);
    assert.deepEqual(Object.keys(reload.body.replicas), [fg.app.gateway.cluster!.replicaId]);
    const config = await admin('GET', '/config');
    assert.deepEqual(config.body.endpoints.map((e: { path: string }) => e.path), ['/mcp', '/more'], 'the reload is in force');

    const restart = await admin('POST', '/upstreams/fx/restart');
    assert.equal(restart.status, 200, JSON.stringify(restart.body));
    assert.equal(restart.body.result, 'applied');
    assert.match(restart.body.replicasError, /unreachable/);

    for (const view of ['/upstreams', '/tenants', '/sessions']) {
      const r = await admin('GET', view);
      assert.equal(r.status, 503, `${view}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error.code, 'unavailable');
    }
  });
});
