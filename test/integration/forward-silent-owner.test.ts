// A forwarded tools/call whose owner took it and then fell silent (frozen: SIGSTOP, a stalled VM; its
// heartbeat lapses). The owner may have run it, or runs it when it wakes, as it was a request already in
// its socket. It was answered 503 "did not answer; retry" with Retry-After: an invitation to run the
// call a second time on the replica that takes the session over. Found by a review: a request that is
// not harmless twice now gets the "may have taken effect" answer, without Retry-After, as when the
// connection to the owner breaks; one that is harmless twice is still invited back.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { startReplicaFrom, startReplicas, writeEverythingConfig, type Replica } from '../helpers/replicas.js';
import { RAW_HEADERS, rawSession as session } from '../helpers/raw-mcp.js';

describe('a forward whose owner falls silent with the request', { timeout: 90_000 }, () => {
  let redis: TestRedis;
  let replicas: Replica[] = [];
  before(async () => {
    redis = await startRedis();
    const store = `{ redis: { url: "${redis.url}", heartbeatMs: 200, replicaTtlMs: 1000, forwardTimeoutMs: 500 } }`;
    replicas = await startReplicas(['sl-owner', 'sl-relay'].map((n) => startReplicaFrom(n, writeEverythingConfig(n, { store }))));
  });
  after(async () => {
    for (const r of replicas) {
      r.child.kill('SIGCONT');
      r.child.kill('SIGKILL');
    }
    await redis?.stop();
  });

  const send = (base: string, sid: string, body: object) =>
    fetch(new URL('/mcp', base), { method: 'POST', headers: { ...RAW_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' }, body: JSON.stringify(body), signal: AbortSignal.timeout(30_000) });

  it('a tools/call: 503 saying it may have taken effect, no Retry-After; a tools/list: 503 with Retry-After', async () => {
    const [owner, relay] = replicas as [Replica, Replica];
    const sid = await session(owner.base);
    owner.child.kill('SIGSTOP');
    try {
      const [call, list] = await Promise.all([
        send(relay.base, sid, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { message: 'once' } } }),
        send(relay.base, sid, { jsonrpc: '2.0', id: 8, method: 'tools/list' }),
      ]);
      const [callText, listText] = [await call.text(), await list.text()];
      assert.equal(call.status, 503, callText);
      assert.equal(call.headers.get('retry-after'), null, `a tools/call the frozen owner holds is invited back (Retry-After): ${callText}`);
      assert.match(callText, /may have taken effect/);
      assert.equal(list.status, 503, listText);
      assert.ok(list.headers.get('retry-after'), 'a tools/list is harmless twice: invited back');
    } finally {
      owner.child.kill('SIGCONT');
    }
  });
});
