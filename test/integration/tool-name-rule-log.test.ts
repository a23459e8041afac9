// A tool whose prefixed name breaks the MCP name rule (a space, a slash) is left out of a prefixed
// endpoint's tools/list, with a warning. That warning came on every tools/list of every client, one per
// such tool and with the upstream's name for it uncut: a client listing in a loop wrote the log as fast
// as it asked, each line as large as the upstream made its names.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient } from '../helpers/sdk.js';

const LONG = `long ${'x'.repeat(20_000)}`;
const BAD = ['get weather', 'repos/search', LONG];
const catalogue = (name: string, ...args: string[]) => ({ name, transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/catalogue-server.mjs', ...args], sandbox: 'none' as const });

describe('a tool name the MCP rule refuses, on a prefixed endpoint', () => {
  const lines: string[] = [];
  let dir: string;
  let gw: RunningGateway;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'swb-names-'));
    const file = join(dir, 'tools.json');
    writeFileSync(file, JSON.stringify(BAD.map((name) => ({ name, description: 'd', inputSchema: { type: 'object' } }))));
    gw = await startGateway({ upstreams: [catalogue('one', '--set', 'chat', '--tools', file), catalogue('two', '--set', 'files')], endpoints: [{ path: '/mcp', upstreams: ['one', 'two'] }] }, { logLines: lines });
  });
  after(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is warned about once per tool, however often clients list, with its name cut', async () => {
    for (let c = 0; c < 2; c++) {
      const client = await connectClient(gw, 'streamable-http');
      for (let i = 0; i < 4; i++) {
        const names = (await client.listTools()).tools.map((t) => t.name);
        assert.deepEqual(names.filter((n) => n.startsWith('one__')).sort(), ['one__list_channels', 'one__post_message']);
      }
      await client.close();
    }
    const warned = lines.filter((l) => l.includes('tool left out: its prefixed name breaks the MCP name rule')).map((l) => JSON.parse(l) as { tool: string });
    assert.equal(warned.length, BAD.length, `${warned.length} warnings for ${BAD.length} tools`);
    assert.deepEqual(warned.map((w) => w.tool.slice(0, 12)).sort(), ['get weather', 'long xxxxxxx', 'repos/search']);
    for (const w of warned) assert.ok(w.tool.length <= 200, `a name of ${w.tool.length} characters in the log`);
  });
});
