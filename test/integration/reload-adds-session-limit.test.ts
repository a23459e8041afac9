// A reload that gives a tenant limits.sessions (or gives it back after taking it away) is in force from the
// next initialize, as the README says of limits: the tenant's sessions already open count against it.
// Before, only sessions opened after the reload counted, so a tenant with many sessions open was let open
// as many more as the new limit allowed. A file-configured gateway, reloaded; real HTTP, a real stdio upstream.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { App } from '../../src/app.js';
import { fileGateway } from '../helpers/file-gateway.js';
import type { RunningGateway } from '../helpers/gateway.js';

const LABEL = join(import.meta.dirname, '..', 'fixtures', 'label-server.mjs');
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const INITIALIZE = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });

function doc(limits: Record<string, number>): Record<string, unknown> {
  return {
    server: { host: '127.0.0.1', port: 0 },
    metrics: { enabled: false },
    logging: { level: process.env.LOG_LEVEL ?? 'silent' },
    pinning: { mode: 'off' },
    tenants: [{ name: 'anonymous', endpoints: ['*'], limits }],
    upstreams: [{ name: 'steady', transport: 'stdio', command: process.execPath, args: [LABEL, '--label', 'v1'], sandbox: 'none' }],
    endpoints: [{ path: '/mcp', upstreams: ['steady'] }],
  };
}

describe('a reload that sets a tenant limits.sessions', () => {
  let app: App;
  let gw: RunningGateway;
  let write: (doc: Record<string, unknown>) => void;
  let close: () => Promise<void>;

  before(async () => {
    ({ app, gw, write, close } = await fileGateway('swb-reload-session-limit-', doc({})));
  });
  after(async () => close());

  const initialize = async (): Promise<{ status: number; sid: string | null }> => {
    const res = await fetch(gw.url(), { method: 'POST', headers: HEADERS, body: INITIALIZE });
    await res.text();
    return { status: res.status, sid: res.headers.get('mcp-session-id') };
  };
  const end = async (sid: string) => {
    const res = await fetch(gw.url(), { method: 'DELETE', headers: { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' } });
    await res.text();
    assert.equal(res.status, 200);
  };

  it('counts the sessions open before it: the tenant is refused until one ends', async () => {
    const open = [await initialize(), await initialize()];
    for (const o of open) assert.equal(o.status, 200);
    write(doc({ sessions: 2 }));
    assert.equal((await app.reload('test')).report.result, 'applied');
    assert.equal((await initialize()).status, 429, 'two sessions open: the tenant is at its new limit');
    await end(open[0]!.sid!);
    const third = await initialize();
    assert.equal(third.status, 200, 'one ended: one more may open');
    assert.equal((await initialize()).status, 429);
    await end(open[1]!.sid!);
    await end(third.sid!);
  });
});
