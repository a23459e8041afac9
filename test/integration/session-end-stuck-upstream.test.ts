// A session that subscribed to a resource of a shared upstream ends at once when its client sends DELETE,
// though that upstream has stopped answering: telling it the subscription is dropped is best effort, and
// neither the client's DELETE nor the gateway's stop waits for the upstream's requestTimeoutMs (here ten
// minutes: a wait for it is a hang, which the suite's timeout turns into a failure). Real HTTP, a real
// stdio upstream stopped with SIGSTOP.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { initializeBody, mcpRequest } from '../helpers/tokens.js';

const URI = 'test://watched-resource';

async function subscribedSession(gw: RunningGateway): Promise<string> {
  const init = await mcpRequest(gw, initializeBody());
  assert.equal(init.status, 200, init.text);
  const sid = init.headers.get('mcp-session-id')!;
  assert.equal((await mcpRequest(gw, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sid })).status, 202);
  const sub = await mcpRequest(gw, { jsonrpc: '2.0', id: 2, method: 'resources/subscribe', params: { uri: URI } }, { sid });
  assert.ok(sub.json?.result, sub.text);
  return sid;
}

describe('a session on an upstream that stopped answering', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let pid = 0;
  before(async () => {
    gw = await startGateway({
      upstreams: [{ name: 'fx', transport: 'stdio' as const, ...FIXTURE, sharing: 'shared' as const, pool: { size: 1 }, requestTimeoutMs: 600_000, maxRequestTimeoutMs: 600_000 }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
  });
  after(async () => {
    if (pid) process.kill(pid, 'SIGCONT');
    await gw?.close();
  });

  it('ends on DELETE without waiting for the upstream to hear of its subscription', async () => {
    const sid = await subscribedSession(gw);
    const inst = [...gw.app.gateway.pools.get('fx')!.instances][0]!;
    pid = inst.pid!;
    process.kill(pid, 'SIGSTOP');
    const del = await mcpRequest(gw, undefined, { method: 'DELETE', sid });
    assert.equal(del.status, 200, del.text);
    assert.equal(gw.app.gateway.registry.get(sid), undefined);
    assert.equal(inst.subscribers(URI).size, 0, 'the session no longer counts as subscribed');
  });
});

describe('the gateway stopping with a session on an upstream that stopped answering', { timeout: 60_000 }, () => {
  it('stops without waiting for the upstream to hear of the session\'s subscription', async () => {
    const gw = await startGateway({
      upstreams: [{ name: 'fx', transport: 'stdio' as const, ...FIXTURE, sharing: 'shared' as const, pool: { size: 1 }, requestTimeoutMs: 600_000, maxRequestTimeoutMs: 600_000 }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
    const pid = [...gw.app.gateway.pools.get('fx')!.instances][0]!.pid!;
    try {
      await subscribedSession(gw);
      process.kill(pid, 'SIGSTOP');
      await gw.close();
      assert.equal(gw.app.gateway.registry.size, 0);
    } finally {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // stopped with the gateway
      }
    }
  });
});
