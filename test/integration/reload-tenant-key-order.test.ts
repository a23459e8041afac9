// A reload that leaves a tenant as it was, its argument rule's JSON Schema written with its keys in another
// order (a config generator, a hand edit), while it changes something else: the reload reports the tenant
// unchanged, so its sessions must not be told to re-list. Policy.replace compared tenants as JSON text,
// key order included, built the tenant a new policy and sent each of its sessions list_changed.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LIST_CHANGED_MAX_MS } from '../../src/session/list-changed-coalescer.js';
import { connectClient } from '../helpers/sdk.js';
import { fileGateway, type FileGateway } from '../helpers/file-gateway.js';

const LABEL = join(import.meta.dirname, '..', 'fixtures', 'label-server.mjs');

function doc(schema: Record<string, unknown>, tenants: Array<Record<string, unknown>> = []): Record<string, unknown> {
  return {
    server: { host: '127.0.0.1', port: 0 },
    metrics: { enabled: false },
    logging: { level: process.env.LOG_LEVEL ?? 'silent' },
    pinning: { mode: 'off' },
    tenants: [{ name: 'anonymous', endpoints: ['*'], arguments: [{ name: 'short', tools: ['*'], schema }] }, ...tenants],
    upstreams: [{ name: 'lab', transport: 'stdio', command: process.execPath, args: [LABEL, '--label', 'v1'], sandbox: 'none' }],
    endpoints: [{ path: '/mcp', upstreams: ['lab'] }],
  };
}

describe('reload: a tenant whose rules are the same, written in another key order', { timeout: 30_000 }, () => {
  let fg: FileGateway;
  let client: Client | undefined;
  before(async () => {
    fg = await fileGateway('swb-reload-key-order-', doc({ type: 'object', maxProperties: 3 }));
  });
  after(async () => {
    await client?.close().catch(() => {});
    await fg.close();
  });

  it('is left as it was: its sessions are not told to re-list', async () => {
    client = await connectClient(fg.gw, 'streamable-http', { path: '/mcp' });
    await client.listTools();
    const heard: string[] = [];
    client.fallbackNotificationHandler = async (n) => void heard.push(n.method);
    fg.write(doc({ maxProperties: 3, type: 'object' }, [{ name: 'other', endpoints: ['*'] }]));
    const { report } = await fg.app.reload('test');
    assert.equal(report.result, 'applied', JSON.stringify(report));
    assert.deepEqual(report.changes?.tenants, { added: ['other'], removed: [], changed: [], unchanged: ['anonymous'] });
    // Absence cannot be awaited: every coalescing window the reload could have opened has closed by then.
    await sleep(2 * LIST_CHANGED_MAX_MS);
    assert.deepEqual(heard.filter((m) => m.endsWith('/list_changed')), []);
  });
});
