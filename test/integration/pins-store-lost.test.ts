import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { startReplica, type Replica } from '../helpers/replicas.js';
import { until } from '../helpers/wait.js';

// A gateway process with its pins in a redis-server of the test's own, killed and started again empty
// (no persistence): the replica writes back the pins it holds with its sessions, so the upstream's next
// listing, anywhere, is held to them rather than pinned afresh.

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function listTools(base: string): Promise<void> {
  const post = (body: unknown, sid?: string) => fetch(new URL('/mcp', base), { method: 'POST', headers: { ...HEADERS, ...(sid ? { 'mcp-session-id': sid } : {}) }, body: JSON.stringify(body) });
  const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'pins-lost', version: '1' } } });
  assert.equal(init.status, 200);
  await init.text();
  const sid = init.headers.get('mcp-session-id')!;
  await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sid)).text();
  const list = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, sid);
  assert.match(await list.text(), /"echo"/);
}

describe('tool pins when Redis comes back without its data', { timeout: 120_000 }, () => {
  let redis: TestRedis;
  let replica: Replica;
  let admin: Redis;
  before(async () => {
    redis = await startRedis();
    replica = await startReplica('pins', redis.url);
    admin = new Redis(redis.url, { maxRetriesPerRequest: null });
  });
  after(async () => {
    admin?.disconnect();
    replica?.child.kill('SIGKILL');
    await redis?.stop();
  });

  it('the replica writes back the pins it holds', async () => {
    await listTools(replica.base);
    const pinned = await admin.hgetall('swb:pins:everything');
    assert.ok(pinned.echo, 'the first listing pinned echo');
    await redis.restart();
    await until('the pins written back', async () => (await admin.hget('swb:pins:everything', 'echo').catch(() => null)) !== null, 30_000);
    assert.deepEqual(await admin.hgetall('swb:pins:everything'), pinned, 'every pin, as it was');
  });
});
