import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { everythingUpstream, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { rawSession, RAW_HEADERS } from '../helpers/raw-mcp.js';

// A replica that relays a call to the replica owning its session is stopping (a rolling update): the
// call is in flight on this replica too, and its graceful stop must wait for it like for its own calls.

describe('graceful shutdown of a replica relaying a call', { timeout: 90_000 }, () => {
  let redis: TestRedis;
  let owner: RunningGateway;
  let relay: RunningGateway;

  before(async () => {
    redis = await startRedis();
    const config = () => ({ store: { redis: { url: redis.url } }, upstreams: [everythingUpstream('everything', 'shared')], endpoints: [{ path: '/mcp', upstreams: ['everything'] }] });
    owner = await startGateway(config());
    relay = await startGateway(config());
  });
  after(async () => {
    await relay?.close();
    await owner?.close();
    await redis?.stop();
  });

  it('a call relayed to its session\'s owner finishes within the grace period of the relaying replica', async () => {
    const sid = await rawSession(owner.base);
    const call = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'trigger-long-running-operation', arguments: { duration: 2, steps: 4 }, _meta: { progressToken: 'p' } } };
    const res = await fetch(new URL('/mcp', relay.base), { method: 'POST', headers: { ...RAW_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' }, body: JSON.stringify(call) });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    // The first progress notification proves the call is in flight, relayed (bounded: the stream ends).
    for (let i = 0; i < 100 && !text.includes('notifications/progress'); i++) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    assert.match(text, /notifications\/progress/);
    const closing = relay.app.close(10_000);
    for (let i = 0; i < 100; i++) {
      const r = await reader.read().catch((e: Error) => ({ done: true, value: undefined, error: e }));
      if (r.done) break;
      text += decoder.decode(r.value, { stream: true });
    }
    await closing;
    assert.match(text, /Long running operation completed/, `the relayed call was cut: ${text}`);
  });
});
