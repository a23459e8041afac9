// A request is the client's to cancel, and its id is taken, from the moment the session accepts it, not
// only once it reaches the upstream: with the Redis store the tenant's concurrent-request limit is a
// round trip, and a request waiting on it was neither cancellable nor holding its id.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { connectClient } from '../helpers/sdk.js';
import { waitFor } from '../helpers/wait.js';

const FLOOD = { name: 'flood', transport: 'stdio' as const, command: process.execPath, args: [resolve('test/fixtures/flood-server.mjs')], sandbox: 'none' as const, sharing: 'shared' as const };

describe('a request waiting on the Redis-kept concurrent-request limit', { timeout: 30_000 }, () => {
  let redis: TestRedis;
  let gw: RunningGateway;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'swb-cancel-'));
    redis = await startRedis();
    gw = await startGateway({
      store: { redis: { url: redis.url, keyPrefix: 'cancel-test:' } },
      upstreams: [FLOOD],
      endpoints: [{ path: '/mcp', upstreams: ['flood'] }],
      tenants: [{ name: 'anonymous', endpoints: ['*'], limits: { concurrentRequests: 4 } }],
    });
  });
  after(async () => {
    await gw?.close();
    await redis?.stop();
  });

  for (const kind of ['sse', 'streamable-http'] as const) {
    it(`is cancelled by the client's notifications/cancelled and never reaches the upstream (${kind})`, async () => {
      const client: Client = await connectClient(gw, kind);
      try {
        const done = join(dir, `done-${kind}`);
        redis.pause(); // the limit's round trip now waits
        const ac = new AbortController();
        const call = client.callTool({ name: 'flood', arguments: { count: 1, bytes: 10, doneFile: done } }, undefined, { signal: ac.signal });
        call.catch(() => {});
        const session = gw.app.gateway.registry.list().at(-1)!.session;
        // Reached the session, waiting on the store (before the fix it was never counted: this times out).
        assert.ok(await waitFor(() => session.inflight === 1, { timeoutMs: 5000 }), 'a request waiting on the limit is not counted in flight');
        // The SDK sends notifications/cancelled; the store answers only once the gateway has taken it
        // (its POST is answered after the session handled it).
        const transport = client.transport!;
        const send = transport.send.bind(transport);
        let cancelSent: Promise<void> | undefined;
        transport.send = (message, options) => {
          const sent = send(message, options);
          if ('method' in message && message.method === 'notifications/cancelled') cancelSent = sent;
          return sent;
        };
        ac.abort();
        assert.ok(await waitFor(() => cancelSent !== undefined, { timeoutMs: 5000 }), 'the client sent no notifications/cancelled');
        await cancelSent;
        redis.resume();
        await assert.rejects(call);
        await sleep(1000);
        assert.equal(existsSync(done), false, 'a call the client had cancelled ran on the upstream');
        assert.equal(session.inflight, 0);
      } finally {
        redis.resume();
        await client.close();
      }
    });
  }
});
