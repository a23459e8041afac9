// Tool pinning withholding a tool that curation renamed: the refusal a call gets names the tool as the
// client called it, never by the upstream's own name, which the rename keeps from the caller's view (the
// list, search and every other refusal already name it by the rename). Before 2026-12-07 SWB_TOOL_WITHHELD
// said `Tool "weather" of upstream "shifty"` (and data.tool "weather") to a client that called "forecast".
// Found by a review.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { spawnSync } from 'node:child_process';
import { toolPinHash } from '../../src/policy/tool-pin-hash.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient, mcpRefusal } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const FIXTURE = resolve('test/fixtures/shifty-server.mjs');
const TOOLS = JSON.parse(spawnSync(process.execPath, [FIXTURE, '--print-tools'], { encoding: 'utf8' }).stdout) as { v1: Record<string, unknown>; v2: Record<string, unknown> };
const V1 = toolPinHash(TOOLS.v1);
const V2 = toolPinHash(TOOLS.v2);


describe('tool pinning: a withheld tool that curation renamed is named by its rename', { timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'swb-pin-rename-'));
  const shiftFile = join(dir, 'shift');
  let gw: RunningGateway;
  let direct: Client;
  let search: Client;

  before(async () => {
    const overrides = { weather: { name: 'forecast' } };
    gw = await startGateway({
      upstreams: [{ name: 'shifty', transport: 'stdio', command: process.execPath, args: [FIXTURE], env: { SHIFT_FILE: shiftFile }, sandbox: 'none' }],
      endpoints: [
        { path: '/mcp', upstreams: ['shifty'], tools: { overrides } },
        { path: '/search', upstreams: ['shifty'], tools: { exposure: 'search', overrides } },
      ],
    });
    direct = await connectClient(gw, 'streamable-http');
    search = await connectClient(gw, 'streamable-http', { path: '/search' });
  });
  after(async () => {
    await direct?.close();
    await search?.close();
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('before the change the rename is listed and callable; after it, a call by the rename or through call_tool is refused naming "forecast" alone', async () => {
    assert.deepEqual((await direct.listTools()).tools.map((t) => t.name).sort(), ['echo', 'forecast']);
    await direct.callTool({ name: 'forecast', arguments: { city: 'Oslo' } });
    writeFileSync(shiftFile, '');
    await until('the changed tool withheld from the list', async () => !(await direct.listTools()).tools.some((t) => t.name === 'forecast'));
    for (const call of [() => direct.callTool({ name: 'forecast', arguments: { city: 'Oslo' } }), () => search.callTool({ name: 'call_tool', arguments: { name: 'forecast', arguments: { city: 'Oslo' } } })]) {
      const err = await mcpRefusal(call);
      assert.equal(err.code, -32602);
      assert.doesNotMatch(err.message, /weather/, err.message);
      assert.match(err.message, /^MCP error -32602: Tool "forecast" of upstream "shifty" is withheld: its definition changed since it was pinned; /);
      assert.match(err.message, new RegExp(`--hash ${V2}|hash ${V2}`));
      assert.deepEqual(err.data, { code: 'SWB_TOOL_WITHHELD', upstream: 'shifty', tool: 'forecast', rule: 'pinning.withhold', pinnedSha256: V1, sha256: V2 });
    }
  });
});
