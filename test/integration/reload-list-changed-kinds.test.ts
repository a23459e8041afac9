// A reload tells a 2025 session to re-list only the kinds it was offered: notifications/*/list_changed
// for a kind whose capability (with listChanged) the session's initialize answer never declared is a
// notification the client was told it would not get (MCP: a server sends list_changed only for a kind it
// declared listChanged for). label-server offers tools only.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LIST_CHANGED_MAX_MS } from '../../src/session/list-changed-coalescer.js';
import { connectClient } from '../helpers/sdk.js';
import { fileGateway, type FileGateway } from '../helpers/file-gateway.js';
import { until } from '../helpers/wait.js';

const LABEL = join(import.meta.dirname, '..', 'fixtures', 'label-server.mjs');

function doc(label: string): Record<string, unknown> {
  return {
    server: { host: '127.0.0.1', port: 0 },
    metrics: { enabled: false },
    logging: { level: process.env.LOG_LEVEL ?? 'silent' },
    pinning: { mode: 'off' },
    tenants: [{ name: 'anonymous', endpoints: ['*'] }],
    upstreams: [{ name: 'lab', transport: 'stdio', command: process.execPath, args: [LABEL, '--label', label], sandbox: 'none' }],
    endpoints: [{ path: '/mcp', upstreams: ['lab'] }],
  };
}

describe('reload: list_changed only for the kinds a session was offered', { timeout: 30_000 }, () => {
  let fg: FileGateway;
  let client: Client | undefined;
  before(async () => {
    fg = await fileGateway('swb-reload-kinds-', doc('v1'));
  });
  after(async () => {
    await client?.close().catch(() => {});
    await fg.close();
  });

  it('a tools-only endpoint reconfigured: tools/list_changed, never prompts or resources', async () => {
    client = await connectClient(fg.gw, 'streamable-http', { path: '/mcp' });
    const caps = client.getServerCapabilities() ?? {};
    assert.deepEqual(Object.keys(caps).filter((k) => ['tools', 'prompts', 'resources'].includes(k)), ['tools']);
    const heard: string[] = [];
    client.fallbackNotificationHandler = async (n) => void heard.push(n.method);
    fg.write(doc('v2'));
    const { report } = await fg.app.reload('test');
    assert.equal(report.result, 'applied', JSON.stringify(report));
    await until('tools/list_changed', () => heard.includes('notifications/tools/list_changed'));
    // Absence cannot be awaited: every coalescing window the reload opened has closed by then.
    await sleep(2 * LIST_CHANGED_MAX_MS);
    assert.deepEqual(heard.filter((m) => m.endsWith('/list_changed')), ['notifications/tools/list_changed']);
  });
});
