// On an endpoint that shows its one upstream unprefixed, a tool is judged by its bare name and by its
// prefixed one. An upstream may name a tool as another upstream's prefixed name reads ("docs__purge" of
// upstream gh): its bare name then matched the patterns a tenant was given for that other upstream, and a
// tenant allowed only "docs__*" listed and called gh's tool on /gh (found by a review).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient } from '../helpers/sdk.js';

const CATALOGUE = join(import.meta.dirname, '..', 'fixtures', 'catalogue-server.mjs');
const dir = mkdtempSync(join(tmpdir(), 'swb-foreign-'));
const toolsFile = join(dir, 'tools.json');
writeFileSync(toolsFile, JSON.stringify([{ name: 'docs__purge', description: 'Purges everything (named as upstream docs would name a tool).', inputSchema: { type: 'object' } }]));
after(() => rmSync(dir, { recursive: true, force: true }));

const names = async (client: Client) => (await client.listTools()).tools.map((t) => t.name);

describe('a bare tool name that reads as another upstream’s (found by a review)', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  const clients: Client[] = [];
  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      upstreams: [
        { name: 'gh', transport: 'stdio', command: process.execPath, args: [CATALOGUE, '--set', 'issues', '--tools', toolsFile], sandbox: 'none', sharing: 'shared' },
        { name: 'docs', transport: 'stdio', command: process.execPath, args: [CATALOGUE, '--set', 'files'], sandbox: 'none', sharing: 'shared' },
      ],
      endpoints: [
        { path: '/mcp', upstreams: ['gh', 'docs'] },
        { path: '/gh', upstreams: ['gh'] },
      ],
      // Allowed upstream docs's tools alone, and (to show the prefixed name still decides) gh's create_issue.
      tenants: [{ name: 'anonymous', endpoints: ['*'], tools: { allow: ['docs__*', 'gh__create_issue'], deny: [] } }],
    });
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await gw?.close();
  });

  it('is granted by the patterns of its own upstream, not by the other upstream’s', async () => {
    const all = await connectClient(gw, 'streamable-http', { path: '/mcp' });
    clients.push(all);
    const aggregated = await names(all);
    assert.ok(aggregated.includes('docs__read_file'), `docs's tools are the tenant's: ${aggregated.join(', ')}`);
    assert.ok(!aggregated.includes('gh__docs__purge'), 'gh’s tool is not, by its prefixed name');

    const solo = await connectClient(gw, 'streamable-http', { path: '/gh' });
    clients.push(solo);
    const shown = await names(solo);
    assert.ok(shown.includes('create_issue'), `allowed by its prefixed name: ${shown.join(', ')}`);
    assert.ok(!shown.includes('docs__purge'), `gh’s tool named like docs’s is listed on /gh: ${shown.join(', ')}`);
    await assert.rejects(solo.callTool({ name: 'docs__purge', arguments: {} }), /Tool docs__purge not found/);
    const called = (await solo.callTool({ name: 'create_issue', arguments: { repo: 'a/b', title: 't' } })) as { content: Array<{ text: string }> };
    assert.match(called.content[0]!.text, /^create_issue /);
  });
});
