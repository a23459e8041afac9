// The registry's refusals of a new session against a tenant's slots kept in a real redis-server: the
// slot is a round trip, during which other sessions are created (or the gateway begins to shut down).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { RedisSessionSlots } from '../../../src/cluster/redis-session-slots.js';
import { parseConfig } from '../../../src/config/load.js';
import { createLogger } from '../../../src/observability/logger.js';
import { MemoryLimitCounters, Policy } from '../../../src/policy/index.js';
import { EndpointRouter } from '../../../src/router/endpoint-router.js';
import { MemoryEventStore } from '../../../src/session/memory-event-store.js';
import { SessionRegistry } from '../../../src/session/session-registry.js';
import { MemoryTransport } from '../../../src/transport/memory-pair.js';
import { UpstreamPool } from '../../../src/upstream/upstream-pool.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';

const logger = createLogger('silent');

describe('SessionRegistry with a tenant\'s slots in Redis', { timeout: 30_000 }, () => {
  let redis: TestRedis;
  let client: Redis;
  before(async () => {
    redis = await startRedis();
    client = new Redis(redis.url);
    await client.set('reg:replica:r1', '1');
  });
  after(async () => {
    client?.disconnect();
    await redis?.stop();
  });

  function build(maxSessions: number) {
    const cfg = parseConfig(
      {
        auth: { mode: 'none' },
        tenants: [{ name: 'anonymous', endpoints: ['*'], limits: { sessions: 1000 } }],
        upstreams: [{ name: 'u', transport: 'stdio', command: 'never-run' }],
        endpoints: [{ path: '/mcp', upstreams: ['u'] }],
      },
      'test',
      {},
    );
    const policy = new Policy(cfg, new MemoryLimitCounters(), new RedisSessionSlots(client, 'reg:', 'r1'));
    const pools = new Map([['u', new UpstreamPool(cfg.upstreams[0]!, logger, () => MemoryTransport.pair()[0])]]);
    const endpoint = new EndpointRouter(cfg.endpoints[0]!, pools, logger);
    const registry = new SessionRegistry({ policy, audit: undefined, idleTimeoutMs: 60_000, clientRequestTimeoutMs: 1000, maxSessions, events: new MemoryEventStore(100), logger });
    const create = () => registry.create('streamable-http', endpoint, { issuer: 'local', subject: 'anonymous', tenant: 'anonymous', scopes: new Set() }, () => MemoryTransport.pair()[0]);
    return { registry, create };
  }

  it('holds no more than maxSessions, however many are opened at once', async () => {
    const { registry, create } = build(2);
    const settled = await Promise.allSettled(Array.from({ length: 8 }, () => create()));
    assert.equal(registry.size, 2, `${registry.size} sessions held with maxSessions 2`);
    assert.equal(settled.filter((s) => s.status === 'fulfilled').length, 2);
    for (const s of settled) if (s.status === 'rejected') assert.equal((s.reason as { code?: string }).code, 'SWB_POOL_EXHAUSTED');
    // The refused ones gave their tenant slots back: only the two held remain.
    assert.equal(await client.zcard('reg:slots:anonymous'), 2);
    await registry.closeAll('test over');
    assert.equal(await client.zcard('reg:slots:anonymous'), 0);
  });

  it('registers no session once shutdown has begun, though its slot was asked for before', async () => {
    const { registry, create } = build(10);
    const opening = create();
    await registry.closeAll('the gateway is shutting down');
    await assert.rejects(opening, (err: { code?: string }) => err.code === 'SWB_SHUTTING_DOWN');
    assert.equal(registry.size, 0);
    assert.equal(await client.zcard('reg:slots:anonymous'), 0, 'its slot was given back');
  });
});
