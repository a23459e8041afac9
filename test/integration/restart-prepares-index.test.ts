// After an upstream restarted, a search-mode endpoint built its tool view and index only on the first
// search (a tools/list_changed had it built ahead; a restart, after which the catalogue may differ as
// much, did not: found by a review). Now a restart prepares them as list_changed does: the gateway lists
// the restarted upstream's tools with no client request, counted in the fixture's LIST_LOG (no timing).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { startGateway } from '../helpers/gateway.js';
import { connectClient } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const FIXTURE = resolve('test/fixtures/shifty-server.mjs');
const dir = mkdtempSync(join(tmpdir(), 'swb-restart-index-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('a restarted upstream on a search-mode endpoint (found by a review)', () => {
  it('has its tools listed and indexed before the first search', { timeout: 60_000 }, async () => {
    const log = join(dir, 'lists');
    const lists = () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0);
    const gw = await startGateway({
      upstreams: [{ name: 'shifty', transport: 'stdio', command: process.execPath, args: [FIXTURE, '--silent'], env: { LIST_LOG: log }, sandbox: 'none', restart: { initialDelayMs: 10 } }],
      endpoints: [{ path: '/mcp', upstreams: ['shifty'], tools: { exposure: 'search' } }],
    });
    const client = await connectClient(gw, 'streamable-http');
    try {
      const base = lists(); // the start-up listings (the name check's and the index's) are done once it listens
      assert.ok(base > 0);
      const pool = gw.app.gateway.pools.get('shifty')!;
      const inst = [...pool.instances][0]!;
      const pid = inst.pid!;
      process.kill(pid, 'SIGKILL');
      await until('the upstream restarted', () => pool.restarts === 1 && inst.state === 'ready' && inst.pid !== pid);
      await until('the restarted upstream listed with no client request', () => lists() === base + 1);
      const r = await client.callTool({ name: 'search_tools', arguments: { query: 'weather for a city' } });
      assert.ok((r.structuredContent as { tools: Array<{ name: string }> }).tools.some((t) => t.name === 'weather'));
      assert.equal(lists(), base + 1, 'the search used the prepared catalogue');
    } finally {
      await client.close();
      await gw.close();
    }
  });
});
