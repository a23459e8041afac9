import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { everythingUpstream, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';
import { rawPost as post } from '../helpers/raw-mcp.js';

// Anything can be published on a Redis channel: a stray client, another version of the gateway, a bug.
// A replica ignores what is not a message of its own kind, counts it, and goes on serving.

async function malformedCount(gw: RunningGateway, channel: string): Promise<number> {
  const text = await (await fetch(gw.app.metricsUrl!)).text();
  const m = new RegExp(`^switchboard_cluster_malformed_messages_total\\{channel="${channel}"\\} (\\d+)`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

describe('messages between replicas that are not what they claim', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  let owner: RunningGateway;
  let other: RunningGateway;
  let raw: Redis;

  before(async () => {
    redis = await startRedis();
    const config = { store: { redis: { url: redis.url } }, upstreams: [everythingUpstream('everything', 'shared')], endpoints: [{ path: '/mcp', upstreams: ['everything'] }] };
    owner = await startGateway(config);
    other = await startGateway(config);
    raw = new Redis(redis.url);
  });
  after(async () => {
    raw?.disconnect();
    await other?.close();
    await owner?.close();
    await redis?.stop();
  });

  it('are ignored and counted (inbox, change bus, admin channel); forwarding and the change bus go on working', async () => {
    const inbox = `swb:inbox:${owner.app.gateway.cluster!.replicaId}`;
    const junk = ['{', 'null', '[1,2]', '{"t":"data","id":1}', '{"t":"head","id":"x","status":"200","headers":{}}', '{"t":"nope","id":"x"}', '{"t":"req","id":"x","from":"y","req":{"method":"POST"}}'];
    for (const text of junk) assert.equal(await raw.publish(inbox, text), 1);
    for (const text of ['{', '42', '{"endpoint":1}']) await raw.publish('swb:changes', text);
    assert.ok(await waitFor(async () => (await malformedCount(owner, 'inbox')) === junk.length), `inbox: ${await malformedCount(owner, 'inbox')} of ${junk.length}`);
    assert.ok(await waitFor(async () => (await malformedCount(owner, 'changes')) === 3), `changes: ${await malformedCount(owner, 'changes')} of 3`);
    // The admin channel (another replica's admin API ending a session held here).
    const admin = ['{', '"end"', '{"t":"end","id":"x","from":"y"}', '{"t":"ended","id":"x","ended":"yes"}'];
    for (const text of admin) assert.equal(await raw.publish(`swb:admin:${owner.app.gateway.cluster!.replicaId}`, text), 1);
    assert.ok(await waitFor(async () => (await malformedCount(owner, 'admin')) === admin.length), `admin: ${await malformedCount(owner, 'admin')} of ${admin.length}`);

    // The owner still serves, and a call through the other replica is still forwarded to it.
    const init = await post(owner.base, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
    assert.equal(init.status, 200, init.text);
    assert.equal((await post(owner.base, { jsonrpc: '2.0', method: 'notifications/initialized' }, init.sid!)).status, 202);
    const echo = await post(other.base, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message: 'still here' } } }, init.sid!);
    assert.equal(echo.status, 200, echo.text);
    assert.match(echo.text, /Echo: still here/);
  });

  it('a client that says its request was forwarded is not believed: the owner keeps its session', async () => {
    const init = await post(owner.base, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
    const sid = init.sid!;
    await post(owner.base, { jsonrpc: '2.0', method: 'notifications/initialized' }, sid);
    const forged = await post(other.base, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message: 'forged' } } }, sid, { 'x-switchboard-forwarded': 'someone' });
    assert.match(forged.text, /Echo: forged/);
    // Forwarded to the owner, not taken over by the replica the client reached.
    assert.equal(await raw.get(`swb:owner:${sid}`), owner.app.gateway.cluster!.replicaId);
  });
});
