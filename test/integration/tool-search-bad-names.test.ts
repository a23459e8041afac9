// A tool whose prefixed name breaks the MCP name rule (only [A-Za-z0-9_.-]) is left out of the
// endpoint, and exposure all says so in the log (once per tool). A search-mode endpoint left it out of
// every search without a word: its tools/list never passes the upstream's list through, and the view
// it searches dropped the tool silently, so an operator could not tell why a tool never turned up. Each
// view now says which tools it left out, once per catalogue version (found by a review).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startGateway } from '../helpers/gateway.js';
import { connectClient } from '../helpers/sdk.js';

const CATALOGUE = join(import.meta.dirname, '..', 'fixtures', 'catalogue-server.mjs');
const dir = mkdtempSync(join(tmpdir(), 'swb-bad-names-'));
after(() => rmSync(dir, { recursive: true, force: true }));

type Found = { structuredContent: { tools: Array<{ name: string }> } };

describe('search mode: tools left out for their names (found by a review)', { timeout: 60_000 }, () => {
  it('are named in one warning per catalogue version, however often the catalogue is searched', async () => {
    const file = join(dir, 'tools.json');
    const tool = (name: string) => ({ name, description: 'Reports the zqbb weather.', inputSchema: { type: 'object', properties: {} } });
    writeFileSync(file, JSON.stringify([tool('zqbb_weather'), tool('zqbb weather'), tool('zqbb/weather')]));
    const logLines: string[] = [];
    const gw = await startGateway(
      {
        // Per-tenant: no instance is every session's, so the start-up name check does not see these tools.
        upstreams: [
          { name: 'wx', transport: 'stdio', command: process.execPath, args: [CATALOGUE, '--tools', file], sandbox: 'none', sharing: 'per-tenant' },
          { name: 'fs', transport: 'stdio', command: process.execPath, args: [CATALOGUE, '--set', 'files'], sandbox: 'none' },
        ],
        endpoints: [{ path: '/mcp', upstreams: ['wx', 'fs'], tools: { exposure: 'search' } }],
      },
      { logLines },
    );
    const client = await connectClient(gw, 'streamable-http');
    try {
      for (let i = 0; i < 3; i++) {
        const r = (await client.callTool({ name: 'search_tools', arguments: { query: 'zqbb weather' } })) as unknown as Found;
        assert.deepEqual(r.structuredContent.tools.map((t) => t.name), ['wx__zqbb_weather']);
      }
      const warned = logLines.map((l) => JSON.parse(l)).filter((l) => /name rule/.test(l.msg));
      assert.equal(warned.length, 1, JSON.stringify(warned));
      assert.deepEqual(warned[0].tools, ['wx__zqbb weather', 'wx__zqbb/weather']);
    } finally {
      await client.close();
      await gw.close();
    }
  });
});
