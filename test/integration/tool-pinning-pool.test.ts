// Tool pinning decides per upstream, not per instance: with a pool of two stdio processes of one
// upstream, a changed tool one of them lists (withheld until approved) must not stay callable through
// the other, which has not listed since its catalogue was cached and may have changed just the same.
// Found by a review: each instance was judged by its own cached catalogue alone.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { toolPinHash } from '../../src/policy/tool-pin-hash.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient, textOf } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const FIXTURE = resolve('test/fixtures/shifty-server.mjs');
const TOOLS = JSON.parse(spawnSync(process.execPath, [FIXTURE, '--print-tools'], { encoding: 'utf8' }).stdout) as { v2: Record<string, unknown> };
const CALLS = 4;

describe('tool pinning over a pool of instances', { timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'swb-pin-pool-'));
  const shiftFile = join(dir, 'shift');
  let gw: RunningGateway;
  let client: Client;
  before(async () => {
    gw = await startGateway({
      // Both processes change "weather" when the file appears, and say nothing (no list_changed).
      upstreams: [{ name: 'shifty', transport: 'stdio', command: process.execPath, args: [FIXTURE, '--silent'], env: { SHIFT_FILE: shiftFile }, sandbox: 'none', sharing: 'shared', pool: { size: 2 }, healthCheck: { intervalMs: 0 } }],
      endpoints: [{ path: '/mcp', upstreams: ['shifty'] }],
      pinning: { mode: 'withhold' },
    });
    client = await connectClient(gw, 'streamable-http');
  });
  after(async () => {
    await client?.close();
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const weather = () => client.callTool({ name: 'weather', arguments: { city: 'Oslo', notes: 'secret' } }).then(textOf, (e: unknown) => e);

  it('a tool withheld on one instance is refused through every instance, until approved', async () => {
    assert.deepEqual((await client.listTools()).tools.map((t) => t.name).sort(), ['echo', 'weather']);
    // Each instance caches its catalogue (calls go round the pool): the first definition, pinned.
    for (let i = 0; i < CALLS; i++) assert.equal(await weather(), 'sunny in Oslo (v1)');
    writeFileSync(shiftFile, '');
    // A list, from one of the instances, shows the change (once the fixture has seen its file): it is withheld.
    await until('a list to show the change', async () => !(await client.listTools()).tools.some((t) => t.name === 'weather'));
    const answers = [];
    for (let i = 0; i < CALLS; i++) answers.push(await weather());
    const ran = answers.filter((a) => typeof a === 'string');
    assert.deepEqual(ran, [], 'the withheld tool ran through an instance that had not listed it since');
    for (const a of answers) assert.equal(((a as McpError).data as Record<string, unknown>).code, 'SWB_TOOL_WITHHELD');

    // Approved: every instance serves it again (none is judged by its catalogue from before the approval).
    const approved = await gw.app.gateway.pins!.store.approve('shifty', [{ tool: 'weather', hash: toolPinHash(TOOLS.v2) }]);
    assert.equal(approved.length, 1);
    for (let i = 0; i < CALLS; i++) assert.equal(await weather(), 'sunny in Oslo (v2)');
  });
});
