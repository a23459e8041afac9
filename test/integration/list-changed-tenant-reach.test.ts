// An upstream's list_changed reaches only the sessions whose tenant may be shown an item of that list of it:
// the lists (and the cursors, and the instructions) leave out an upstream the tenant's rules reach nothing
// of, so its changes are none of that tenant's either. Before, every session of the endpoint was told, and
// re-listed for nothing each time an upstream it may not see changed (and learned when it did); with replicas,
// a listen stream heard such a change another replica's instance announced. Found by a review.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { openListen } from '../helpers/modern-http.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { connectClient } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'swb-reach-'));
/** The shifty fixture as upstream `name`; `at`: the replica whose process it is (each shifts on a file of its own). */
const shifty = (name: string, at = '') => ({
  name,
  transport: 'stdio' as const,
  command: process.execPath,
  args: ['test/fixtures/shifty-server.mjs'],
  sandbox: 'none' as const,
  sharing: 'shared' as const,
  pool: { size: 1 },
  env: { SHIFT_FILE: join(dir, `${at}${name}.shift`), LIST_LOG: join(dir, `${at}${name}.lists`) },
});
const listings = (file: string) => (existsSync(join(dir, `${file}.lists`)) ? readFileSync(join(dir, `${file}.lists`), 'utf8').split('\n').length - 1 : 0);
// Only "seen"'s tools: of "hidden" no tool, and no prompt or resource of anyone.
const TENANTS = [{ name: 'anonymous', endpoints: ['*'], tools: { allow: ['seen__*'] }, prompts: { allow: [] }, resources: { allow: [] } }];

describe("list_changed of an upstream the session's tenant may see nothing of", () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      tenants: TENANTS,
      upstreams: [shifty('seen'), shifty('hidden')],
      endpoints: [{ path: '/mcp', upstreams: ['seen', 'hidden'] }],
    });
  });
  after(() => gw.close());

  it('is not sent to it, in either era; the one of an upstream it sees is', async () => {
    const client = await connectClient(gw, 'streamable-http');
    const listen = await openListen(gw.url(), 'reach-listen', { toolsListChanged: true });
    try {
      let heard = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => void heard++);
      assert.deepEqual((await client.listTools()).tools.map((t) => t.name).sort(), ['seen__echo', 'seen__weather']);
      assert.equal((await listen.next()).method, 'notifications/subscriptions/acknowledged');
      const before = listings('hidden');
      writeFileSync(join(dir, 'hidden.shift'), 'v2');
      // The gateway lists "hidden" again once it has heard its list_changed (and so passed it on, if it does).
      await until('the gateway heard hidden change', () => listings('hidden') > before);
      // Longer than a session's list_changed window may hold one (1 s at most).
      await sleep(1500);
      assert.equal(heard, 0, 'the 2025 session is not told of an upstream it may see nothing of');
      writeFileSync(join(dir, 'seen.shift'), 'v2');
      await until('the session heard seen change', () => heard > 0);
      // The listen's first notification after its acknowledgement is seen's, not hidden's (which came first).
      const next = await listen.next();
      assert.equal(next.method, 'notifications/tools/list_changed');
      assert.equal(heard, 1, 'told once, of the upstream it sees');
    } finally {
      listen.close();
      await client.close();
    }
  });
});

describe("list_changed another replica's instance announces, of an upstream the listen's tenant may see nothing of", { timeout: 60_000 }, () => {
  let redis: TestRedis;
  const replicas: RunningGateway[] = [];
  const replica = async (at: string) => {
    const gw = await startGateway({
      pinning: { mode: 'off' },
      store: { redis: { url: redis.url, keyPrefix: 'reach:', heartbeatMs: 200, replicaTtlMs: 1000 } },
      tenants: TENANTS,
      upstreams: [shifty('seen', at), shifty('hidden', at)],
      endpoints: [{ path: '/mcp', upstreams: ['seen', 'hidden'] }],
    });
    replicas.push(gw);
    return gw;
  };
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    for (const r of replicas) await r.close();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('does not reach its listen stream; the one of an upstream it sees does', async () => {
    const a = await replica('a-');
    await replica('b-');
    const listen = await openListen(a.url(), 'across-reach', { toolsListChanged: true });
    const heard: string[] = [];
    try {
      assert.equal((await listen.next()).method, 'notifications/subscriptions/acknowledged');
      void (async () => {
        for (;;) heard.push((await listen.next()).method);
      })().catch(() => {});
      const before = listings('b-hidden');
      writeFileSync(join(dir, 'b-hidden.shift'), 'v2');
      await until("replica B heard its hidden's change", () => listings('b-hidden') > before);
      await sleep(1500);
      assert.deepEqual(heard, [], "B's hidden changed: nothing for a tenant that may see nothing of it");
      writeFileSync(join(dir, 'b-seen.shift'), 'v2');
      await until("the listen heard B's seen change", () => heard.length > 0);
      assert.deepEqual(heard, ['notifications/tools/list_changed']);
    } finally {
      listen.close();
    }
  });
});
