// A reload that turns an upstream's tool pinning from warn to withhold: a changed definition that warn let
// through must be withheld from then on, not passed on the strength of the verdict warn gave it.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { App } from '../../src/app.js';
import { fileGateway } from '../helpers/file-gateway.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { connectClient } from '../helpers/sdk.js';

const LABEL = join(import.meta.dirname, '..', 'fixtures', 'label-server.mjs');

// The label is in the tool "label"'s description: a new label is a changed definition.
function doc(label: string, pinning: 'warn' | 'withhold'): Record<string, unknown> {
  return {
    server: { host: '127.0.0.1', port: 0 },
    metrics: { enabled: false },
    logging: { level: process.env.LOG_LEVEL ?? 'silent' },
    tenants: [{ name: 'anonymous', endpoints: ['*'] }],
    upstreams: [{ name: 'labels', transport: 'stdio', command: process.execPath, args: [LABEL, '--label', label], sandbox: 'none', pinning }],
    endpoints: [{ path: '/mcp', upstreams: ['labels'] }],
  };
}

describe('a reload that turns an upstream from pinning warn to withhold', () => {
  let app: App;
  let gw: RunningGateway;
  let write: (doc: Record<string, unknown>) => void;
  let close: () => Promise<void>;
  const clients: Client[] = [];
  const listed = async () => {
    const c = await connectClient(gw, 'streamable-http');
    clients.push(c);
    return (await c.listTools()).tools.map((t) => t.name).sort();
  };

  before(async () => {
    ({ app, gw, write, close } = await fileGateway('swb-reload-pinning-', doc('v1', 'warn')));
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await close();
  });

  it('withholds the definition that changed while warn was in force', async () => {
    assert.deepEqual(await listed(), ['label', 'sleep'], 'the first listing is the baseline');
    write(doc('v2', 'warn'));
    assert.equal((await app.reload('test')).report.result, 'applied');
    assert.deepEqual(await listed(), ['label', 'sleep'], 'warn: the changed definition passes, with a warning');
    write(doc('v2', 'withhold'));
    assert.equal((await app.reload('test')).report.result, 'applied');
    assert.deepEqual(await listed(), ['sleep'], 'withhold: the changed definition, never approved, is withheld');
  });
});
