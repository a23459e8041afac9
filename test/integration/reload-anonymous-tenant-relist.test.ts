// A reload that names the tenant "anonymous" where none was named, or stops naming it (auth.mode none:
// every caller is "anonymous", allowed everything while no tenant has that name), changes what every open
// session may use (found by a review, 2026-12-06). The sessions followed the new rules, but only a tenant
// the diff called "changed" was told to re-list: one added or removed was not, so clients kept showing
// the tools they had listed (now refused) or never learned of those now allowed. Now every session whose
// rules a reload replaced is sent notifications/tools/list_changed. Real gateway from a real file, the
// official SDK client.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectClient } from '../helpers/sdk.js';
import { fileGateway, type FileGateway } from '../helpers/file-gateway.js';
import { until } from '../helpers/wait.js';

const LABEL = join(import.meta.dirname, '..', 'fixtures', 'label-server.mjs');

function doc(tenants?: unknown[]): Record<string, unknown> {
  return {
    server: { host: '127.0.0.1', port: 0 },
    metrics: { enabled: false },
    logging: { level: process.env.LOG_LEVEL ?? 'silent' },
    pinning: { mode: 'off' },
    ...(tenants ? { tenants } : {}),
    upstreams: [{ name: 'lab', transport: 'stdio', command: process.execPath, args: [LABEL, '--label', 'v1'], sandbox: 'none' }],
    endpoints: [{ path: '/mcp', upstreams: ['lab'] }],
  };
}

describe('reload: the tenant "anonymous" named or no longer named', { timeout: 30_000 }, () => {
  let fg: FileGateway;
  let client: Client | undefined;
  before(async () => {
    fg = await fileGateway('swb-reload-anon-', doc());
  });
  after(async () => {
    await client?.close().catch(() => {});
    await fg.close();
  });

  it('tells open sessions to re-list, both ways', async () => {
    client = await connectClient(fg.gw, 'streamable-http', { path: '/mcp' });
    const before = (await client.listTools()).tools.length;
    assert.ok(before > 0);
    let heard = 0;
    client.fallbackNotificationHandler = async (n) => void (n.method === 'notifications/tools/list_changed' && heard++);

    fg.write(doc([{ name: 'anonymous', endpoints: ['*'], tools: { allow: [], deny: [] } }]));
    let { report } = await fg.app.reload('test');
    assert.equal(report.result, 'applied', JSON.stringify(report));
    await until('tools/list_changed once "anonymous" is named', () => heard === 1);
    assert.equal((await client.listTools()).tools.length, 0, 'its rules allow no tool');

    fg.write(doc());
    ({ report } = await fg.app.reload('test'));
    assert.equal(report.result, 'applied', JSON.stringify(report));
    await until('tools/list_changed once it is no longer named', () => heard === 2);
    assert.equal((await client.listTools()).tools.length, before);
  });
});
