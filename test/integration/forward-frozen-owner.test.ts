// A GET stream relayed over HTTP from an owner that freezes (SIGSTOP): the relay watched the owner's
// heartbeat only until its answer began, and undici's body has no idle timeout, so the client's stream
// stayed open for ever while another replica took the session over; the client, its stream open, never
// reconnected and missed the new owner's notifications. Found by a review: the relay now keeps asking.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { startReplicaFrom, startReplicas, writeEverythingConfig, type Replica } from '../helpers/replicas.js';
import { rawSession as session } from '../helpers/raw-mcp.js';

describe('a stream relayed over HTTP from an owner that freezes', { timeout: 90_000 }, () => {
  let redis: TestRedis;
  let replicas: Replica[] = [];
  before(async () => {
    redis = await startRedis();
    const store = `{ redis: { url: "${redis.url}", heartbeatMs: 200, replicaTtlMs: 1000, forwardTimeoutMs: 500 } }`;
    replicas = await startReplicas(['fz-owner', 'fz-relay'].map((n) => startReplicaFrom(n, writeEverythingConfig(n, { store }))));
  });
  after(async () => {
    for (const r of replicas) {
      r.child.kill('SIGCONT');
      r.child.kill('SIGKILL');
    }
    await redis?.stop();
  });

  it("ends the client's stream once the owner's heartbeat lapses", async () => {
    const [owner, relay] = replicas as [Replica, Replica];
    const sid = await session(owner.base);
    const res = await fetch(new URL('/mcp', relay.base), { headers: { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' }, signal: AbortSignal.timeout(30_000) });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    owner.child.kill('SIGSTOP');
    try {
      // Read until the stream ends; the 30 s signal above bounds the wait (an error, not an end, fails the test).
      let ended = false;
      for (let i = 0; i < 10_000 && !ended; i++) ended = (await reader.read()).done;
      assert.ok(ended, "the client's stream ended");
    } finally {
      owner.child.kill('SIGCONT');
    }
  });
});
