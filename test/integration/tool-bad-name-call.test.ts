// A prefixed exposure-all endpoint leaves out of its tools/list a tool whose own name breaks the MCP
// name rule ("fs__archive/zip folder"). A call by that prefixed name still reached the upstream's tool
// when the endpoint had no curation (the call went straight to the router, which read the upstream from
// the prefix): what is not listed must not be callable. It is now answered exactly as an unknown tool;
// a rename keeps it callable by the new name.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient, textOf } from '../helpers/sdk.js';

const dir = mkdtempSync(join(tmpdir(), 'swb-bad-name-call-'));
const file = join(dir, 'tools.json');
writeFileSync(file, JSON.stringify([{ name: 'archive/zip folder', description: 'Pack a folder into a zip archive.', inputSchema: { type: 'object', properties: {} } }]));
const upstream = (name: string, ...args: string[]) => ({ name, transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/catalogue-server.mjs', ...args], sandbox: 'none' as const });

/** The error a call gets, as the client sees it (code and message with the name taken out). */
async function refusal(c: Client, name: string): Promise<{ code: unknown; message: string }> {
  const err = await c.callTool({ name, arguments: {} }).then(
    (r) => assert.fail(`called: ${JSON.stringify(r)}`),
    (e: { code?: unknown; message: string }) => e,
  );
  return { code: err.code, message: err.message.replace(name, '<name>') };
}

describe('a prefixed exposure-all endpoint: a tool left out for its own name (found by a review)', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  const clients: Client[] = [];
  before(async () => {
    gw = await startGateway({
      upstreams: [upstream('gh', '--set', 'issues'), upstream('fs', '--set', 'files', '--tools', file)],
      endpoints: [
        { path: '/plain', upstreams: ['gh', 'fs'] },
        { path: '/renamed', upstreams: ['gh', 'fs'], tools: { overrides: { 'fs__archive/zip folder': { name: 'zip_folder' } } } },
      ],
    });
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await gw.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is not listed, and a call by its prefixed name is answered exactly as an unknown tool', async () => {
    const c = await connectClient(gw, 'streamable-http', { path: '/plain' });
    clients.push(c);
    const names = (await c.listTools()).tools.map((t) => t.name);
    assert.ok(!names.includes('fs__archive/zip folder'), names.join(', '));
    const unknown = await refusal(c, 'fs__no_such_tool');
    assert.deepEqual(await refusal(c, 'fs__archive/zip folder'), unknown);
  });

  it('with a rename: called by the new name, not by the prefixed one', async () => {
    const c = await connectClient(gw, 'streamable-http', { path: '/renamed' });
    clients.push(c);
    assert.equal(textOf(await c.callTool({ name: 'zip_folder', arguments: {} })), 'archive/zip folder {}');
    assert.deepEqual(await refusal(c, 'fs__archive/zip folder'), await refusal(c, 'fs__no_such_tool'));
  });
});
