// An upstream that changes its tools without notifications/tools/list_changed (shifty --silent --add-tool
// adds "weather2"): with exposure all, a client's tools/list passed the new tool on from the upstream, but a
// call to it was checked against the gateway's cached catalogue and answered "Tool shifty__weather2 not
// found" until the upstream restarted (found by a review). Now a listing that differs from the cache
// replaces it (and sessions are told, as list_changed would), and a call to a name the cache does not know
// re-lists that upstream once, at most once per relist.unknownToolMs per instance: a flood of unknown
// names costs the upstream one tools/list, counted here in the fixture's LIST_LOG (no timing).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient, textOf } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const FIXTURE = resolve('test/fixtures/shifty-server.mjs');
const dir = mkdtempSync(join(tmpdir(), 'swb-silent-calls-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

async function gateway(pinning: 'off' | 'withhold' = 'off'): Promise<{ gw: RunningGateway; shift: string; lists: () => number }> {
  const shift = join(dir, `shift-${n}`);
  const log = join(dir, `lists-${n++}`);
  const gw = await startGateway({
    upstreams: [
      { name: 'shifty', transport: 'stdio', command: process.execPath, args: [FIXTURE, '--silent', '--add-tool'], env: { SHIFT_FILE: shift, LIST_LOG: log }, sandbox: 'none', relist: { unknownToolMs: 600_000 }, pinning },
      { name: 'other', transport: 'stdio', command: process.execPath, args: [FIXTURE], sandbox: 'none' },
    ],
    endpoints: [{ path: '/mcp', upstreams: ['shifty', 'other'] }],
  });
  const lists = () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0);
  return { gw, shift, lists };
}

/** Makes the fixture add weather2 (silently) and waits until a listing shows it. */
async function silentlyAdd(shift: string, listed: () => Promise<string[]>): Promise<void> {
  writeFileSync(shift, '');
  await until('the upstream lists weather2', async () => (await listed()).includes('weather2'));
}

describe('an upstream that changes its tools silently, exposure all (found by a review)', () => {
  it('a tool its tools/list showed can be called, and other sessions are told to re-list', { timeout: 60_000 }, async () => {
    const { gw, shift } = await gateway();
    const lister = await connectClient(gw, 'streamable-http');
    const other = await connectClient(gw, 'streamable-http');
    let told = 0;
    other.setNotificationHandler(ToolListChangedNotificationSchema, () => void told++);
    try {
      assert.ok(!(await lister.listTools()).tools.some((t) => t.name === 'shifty__weather2'));
      await lister.callTool({ name: 'shifty__echo', arguments: { text: 'x' } }); // the catalogue is cached
      const inst = [...gw.app.gateway.pools.get('shifty')!.instances][0]!;
      await silentlyAdd(shift, async () => [...(await inst.request('tools/list', undefined, {})).tools as Array<{ name: string }>].map((t) => t.name));
      const listed = (await lister.listTools()).tools.map((t) => t.name);
      assert.ok(listed.includes('shifty__weather2'), 'the list passes the new tool on');
      const result = await lister.callTool({ name: 'shifty__weather2', arguments: { city: 'Oslo' } });
      assert.equal(result.isError, undefined, JSON.stringify(result));
      assert.equal(textOf(result), 'better: sunny in Oslo (v2)');
      await until('the other session is told its tools changed', () => told > 0);
    } finally {
      await lister.close();
      await other.close();
      await gw.close();
    }
  });

  it('a call to a name the cache does not know re-lists once; a flood of unknown names costs one tools/list', { timeout: 60_000 }, async () => {
    const { gw, shift, lists } = await gateway();
    const client = await connectClient(gw, 'streamable-http');
    try {
      await client.callTool({ name: 'shifty__echo', arguments: { text: 'x' } }); // the catalogue is cached
      const inst = [...gw.app.gateway.pools.get('shifty')!.instances][0]!;
      await silentlyAdd(shift, async () => [...(await inst.request('tools/list', undefined, {})).tools as Array<{ name: string }>].map((t) => t.name));
      const before = lists();
      // Never listed by this client: the name is unknown to the cache, which is listed afresh once.
      const result = await client.callTool({ name: 'shifty__weather2', arguments: { city: 'Rome' } });
      assert.equal(textOf(result), 'better: sunny in Rome (v2)');
      assert.equal(lists(), before + 1, 'one tools/list found it');
      await Promise.all(Array.from({ length: 20 }, (_, i) => assert.rejects(client.callTool({ name: `shifty__nope${i}`, arguments: {} }), /Tool shifty__nope\d+ not found/)));
      // Within relist.unknownToolMs of that listing: none of them lists again.
      assert.equal(lists(), before + 1, 'a flood of unknown names made no more listings');
    } finally {
      await client.close();
      await gw.close();
    }
  });

  it('with tool pinning, a tool added silently stays withheld: neither listed nor callable', { timeout: 60_000 }, async () => {
    const { gw, shift } = await gateway('withhold');
    const client = await connectClient(gw, 'streamable-http');
    try {
      await client.listTools(); // the first sighting is pinned
      const inst = [...gw.app.gateway.pools.get('shifty')!.instances][0]!;
      await silentlyAdd(shift, async () => [...(await inst.request('tools/list', undefined, {})).tools as Array<{ name: string }>].map((t) => t.name));
      assert.ok(!(await client.listTools()).tools.some((t) => t.name === 'shifty__weather2'));
      await assert.rejects(client.callTool({ name: 'shifty__weather2', arguments: { city: 'Oslo' } }), /withheld: it is a new tool/);
    } finally {
      await client.close();
      await gw.close();
    }
  });
});
