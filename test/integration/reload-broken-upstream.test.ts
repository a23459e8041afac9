// A reload (or an upstream restart from the admin API) that would swap a working upstream for one that
// does not start fails and changes nothing: the pool in force keeps serving, the config in force stays,
// and the answer says which upstream and why (found by a review: it was applied, an outage).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { App } from '../../src/app.js';
import { fileGateway, type FileGateway } from '../helpers/file-gateway.js';
import { connectClient, textOf } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const LABEL = join(import.meta.dirname, '..', 'fixtures', 'label-server.mjs');
const upstream = (label: string, args = [LABEL, '--label', label]) => ({ name: 'u', transport: 'stdio', command: process.execPath, args, sandbox: 'none', pool: { size: 1 } });
const doc = (u: Record<string, unknown>) => ({
  server: { host: '127.0.0.1', port: 0 },
  metrics: { enabled: false },
  logging: { level: process.env.LOG_LEVEL ?? 'silent' },
  pinning: { mode: 'off' },
  tenants: [{ name: 'anonymous', endpoints: ['*'] }],
  upstreams: [u],
  endpoints: [{ path: '/mcp', upstreams: ['u'] }],
});

describe('a reload to an upstream that does not start', () => {
  let fg: FileGateway;
  let app: App;
  let client: Client;
  before(async () => {
    fg = await fileGateway('swb-broken-', doc(upstream('v1')));
    app = fg.app;
    client = await connectClient(fg.gw, 'streamable-http');
  });
  after(async () => {
    await client?.close().catch(() => {});
    await fg?.close();
  });

  it('fails, names the upstream and its error, and the working pool keeps serving', async () => {
    const v1 = textOf(await client.callTool({ name: 'label', arguments: {} }));
    const pool = app.gateway.pools.get('u')!;
    const config = app.gateway.config;
    fg.write(doc(upstream('v2', [join(fg.file, '..', 'no-such-server.mjs')])));
    const { report } = await app.reload('test');
    assert.equal(report.result, 'failed', JSON.stringify(report));
    assert.match(report.problems.join('\n'), /upstream "u": its new configuration did not start/);
    assert.equal(app.gateway.pools.get('u'), pool, 'the pool in force is still listed');
    assert.equal(app.gateway.config, config, 'the config in force is unchanged');
    assert.equal(textOf(await client.callTool({ name: 'label', arguments: {} })), v1, 'the same process answers');
  });

  it('the file fixed, the next reload applies it', async () => {
    fg.write(doc(upstream('v2')));
    const { report } = await app.reload('test');
    assert.equal(report.result, 'applied', JSON.stringify(report));
    await until('the new upstream answers', async () => /^v2 /.test(textOf(await client.callTool({ name: 'label', arguments: {} }))));
  });
});
