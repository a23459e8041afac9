// An upstream tool whose name breaks the MCP name rule ("bad name", "github/create-issue") is left out of
// an endpoint's tools. The operator's way to keep it is a rename (tools.overrides.<canonical>.name): the
// tool is then exposed, found and called by its new name, in both exposure modes. Before, the rename did
// nothing: the tool stayed left out, with a warning that did not mention the rename.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient, textOf } from '../helpers/sdk.js';

const dir = mkdtempSync(join(tmpdir(), 'swb-bad-names-'));
const file = join(dir, 'tools.json');
writeFileSync(file, JSON.stringify([{ name: 'archive/zip folder', description: 'Pack a folder into a zip archive.', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } }]));
const upstream = (name: string, ...args: string[]) => ({ name, transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/catalogue-server.mjs', ...args], sandbox: 'none' as const });
const overrides = { 'fs__archive/zip folder': { name: 'zip_folder' } };

describe('a rename of a tool whose own name breaks the MCP name rule (found by a review)', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  const logLines: string[] = [];
  const clients: Client[] = [];
  const connect = async (path: string) => {
    const c = await connectClient(gw, 'streamable-http', { path });
    clients.push(c);
    return c;
  };
  before(async () => {
    gw = await startGateway({
      upstreams: [upstream('gh', '--set', 'issues'), upstream('fs', '--set', 'files', '--tools', file)],
      endpoints: [
        { path: '/all', upstreams: ['gh', 'fs'], tools: { overrides } },
        { path: '/search', upstreams: ['gh', 'fs'], tools: { exposure: 'search', overrides } },
      ],
    }, { logLines });
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await gw.close();
  });

  it('exposure all: lists it by its new name, and a call by that name reaches the upstream’s own', async () => {
    const c = await connect('/all');
    const names = (await c.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes('zip_folder'), names.join(', '));
    assert.equal(textOf(await c.callTool({ name: 'zip_folder', arguments: { path: '/a' } })), 'archive/zip folder {"path":"/a"}');
  });

  it('exposure search: finds it by its new name and calls it through call_tool', async () => {
    const c = await connect('/search');
    const r = (await c.callTool({ name: 'search_tools', arguments: { query: 'zip a folder' } })) as unknown as { structuredContent: { tools: Array<{ name: string }> } };
    assert.equal(r.structuredContent.tools[0]?.name, 'zip_folder');
    assert.equal(textOf(await c.callTool({ name: 'call_tool', arguments: { name: 'zip_folder', arguments: { path: '/b' } } })), 'archive/zip folder {"path":"/b"}');
  });

  it('is not said to be left out (the start\'s catalogue check, the search view)', () => {
    assert.deepEqual(logLines.filter((l) => l.includes('zip folder') && /left out|name rule/.test(l)), []);
    assert.ok(logLines.some((l) => l.includes('zip_folder → fs__archive/zip folder')), 'the view says it renamed the tool');
  });
});

describe('an endpoint that shows its one upstream unprefixed passes its tool names on as they are, curated or not (found by a review)', { timeout: 60_000 }, () => {
  it('an exclude glob for another tool does not make a tool with a space or a slash in its name vanish', async () => {
    const gw = await startGateway({
      upstreams: [upstream('fs', '--set', 'files', '--tools', file)],
      endpoints: [
        { path: '/plain', upstreams: ['fs'] },
        { path: '/curated', upstreams: ['fs'], tools: { exclude: ['move_file'] } },
      ],
    });
    try {
      for (const path of ['/plain', '/curated']) {
        const c = await connectClient(gw, 'streamable-http', { path });
        try {
          const names = (await c.listTools()).tools.map((t) => t.name);
          assert.ok(names.includes('archive/zip folder'), `${path}: ${names.join(', ')}`);
          assert.equal(textOf(await c.callTool({ name: 'archive/zip folder', arguments: {} })), 'archive/zip folder {}', path);
        } finally {
          await c.close();
        }
      }
    } finally {
      await gw.close();
    }
  });
});
