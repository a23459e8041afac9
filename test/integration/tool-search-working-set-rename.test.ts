// search+working-set lists the tools a session's searches found. The set held their exposed names, so a
// reload that renamed a found tool (tools.overrides.<canonical>.name) dropped it from the session's list:
// the new name was never found, the old one names nothing. The set now holds each tool's upstream identity
// (its upstream and the upstream's own name), which a rename does not change (found by a review).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { fileGateway, type FileGateway } from '../helpers/file-gateway.js';
import { connectClient } from '../helpers/sdk.js';

const CATALOGUE = join(import.meta.dirname, '..', 'fixtures', 'catalogue-server.mjs');

function doc(overrides: Record<string, unknown>): Record<string, unknown> {
  return {
    server: { host: '127.0.0.1', port: 0 },
    metrics: { enabled: false },
    pinning: { mode: 'off' },
    tenants: [{ name: 'anonymous', endpoints: ['*'] }],
    upstreams: [
      { name: 'fs', transport: 'stdio', command: process.execPath, args: [CATALOGUE, '--set', 'files'], sandbox: 'none' },
      { name: 'gh', transport: 'stdio', command: process.execPath, args: [CATALOGUE, '--set', 'issues'], sandbox: 'none' },
    ],
    endpoints: [{ path: '/mcp', upstreams: ['fs', 'gh'], tools: { exposure: 'search+working-set', overrides } }],
  };
}

describe('search+working-set: a found tool renamed by a reload (found by a review)', { timeout: 60_000 }, () => {
  let fg: FileGateway;
  let client: Client | undefined;
  before(async () => {
    fg = await fileGateway('swb-ws-rename-', doc({}));
  });
  after(async () => {
    await client?.close().catch(() => {});
    await fg.close();
  });

  it('stays in the session’s list under its new name', async () => {
    client = await connectClient(fg.gw, 'streamable-http', { path: '/mcp' });
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {});
    const r = (await client.callTool({ name: 'search_tools', arguments: { query: 'read the contents of a file', limit: 1 } })) as unknown as { structuredContent: { tools: Array<{ name: string }> } };
    assert.deepEqual(r.structuredContent.tools.map((t) => t.name), ['fs__read_file']);
    assert.ok((await client.listTools()).tools.some((t) => t.name === 'fs__read_file'));
    fg.write(doc({ fs__read_file: { name: 'read_text' } }));
    assert.equal((await fg.app.reload('test')).report.result, 'applied');
    const listed = (await client.listTools()).tools.map((t) => t.name);
    assert.deepEqual(listed.filter((n) => n !== 'search_tools' && n !== 'call_tool'), ['read_text']);
  });
});
