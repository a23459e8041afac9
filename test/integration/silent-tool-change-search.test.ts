// A search-mode endpoint never passes an upstream's tools/list on, so an upstream that adds a tool without
// notifications/tools/list_changed (shifty --silent --add-tool) had it found by no search until the upstream
// restarted (found by a review). Now a catalogue in use is listed afresh once per relist.intervalMs per
// instance, in the background: the change is told as list_changed and the next search finds the tool. The
// gateway's listings are counted in the fixture's LIST_LOG: a burst of searches costs at most one.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startGateway } from '../helpers/gateway.js';
import { connectClient, textOf } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const FIXTURE = resolve('test/fixtures/shifty-server.mjs');
const dir = mkdtempSync(join(tmpdir(), 'swb-silent-search-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function found(client: Client, query: string): Promise<string[]> {
  const r = await client.callTool({ name: 'search_tools', arguments: { query } });
  return ((r.structuredContent as { tools: Array<{ name: string }> }).tools ?? []).map((t) => t.name);
}

describe('an upstream that changes its tools silently, exposure search (found by a review)', () => {
  it('search finds the new tool once the catalogue in use is listed afresh, and the session is told', { timeout: 60_000 }, async () => {
    const shift = join(dir, 'shift');
    const log = join(dir, 'lists');
    const lists = () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0);
    const gw = await startGateway({
      upstreams: [
        { name: 'shifty', transport: 'stdio', command: process.execPath, args: [FIXTURE, '--silent', '--add-tool'], env: { SHIFT_FILE: shift, LIST_LOG: log }, sandbox: 'none', pinning: 'off', relist: { intervalMs: 1000 } },
        { name: 'other', transport: 'stdio', command: process.execPath, args: [FIXTURE], sandbox: 'none' },
      ],
      endpoints: [{ path: '/mcp', upstreams: ['shifty', 'other'], tools: { exposure: 'search' } }],
    });
    const client = await connectClient(gw, 'streamable-http');
    let told = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void told++);
    try {
      assert.ok(!(await found(client, 'better weather')).includes('shifty__weather2'));
      writeFileSync(shift, '');
      const inst = [...gw.app.gateway.pools.get('shifty')!.instances][0]!;
      await until('the upstream lists weather2', async () => ((await inst.request('tools/list', undefined, {})).tools as Array<{ name: string }>).some((t) => t.name === 'weather2'));
      await until('a search finds weather2', async () => (await found(client, 'better weather')).includes('shifty__weather2'));
      await until('the session is told its tools changed', () => told > 0);
      const call = await client.callTool({ name: 'call_tool', arguments: { name: 'shifty__weather2', arguments: { city: 'Oslo' } } });
      assert.equal(textOf(call), 'better: sunny in Oslo (v2)');
      const before = lists();
      await Promise.all(Array.from({ length: 20 }, () => found(client, 'weather')));
      assert.ok(lists() <= before + 1, `a burst of 20 searches listed at most once (saw ${lists() - before})`);
    } finally {
      await client.close();
      await gw.close();
    }
  });
});
