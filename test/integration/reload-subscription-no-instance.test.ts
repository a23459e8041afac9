// A reload that replaced a per-session upstream under a session holding a resource subscription on it
// (found by a review, 2026-12-06). The session's instance of the new pool could not be had (the new
// command fails: logged, its calls fail), and moving the subscription then asked that pool for the
// session's instance, which threw outside the catch meant for it. The error escaped the reload after
// its one synchronous swap: the report said "failed" of a config in force, and what comes after the swap
// never ran: the sessions of an endpoint the same file removed stayed open (listed, their slots held).
// Now the subscription is dropped with a warning, as when it cannot be made again, and the reload
// finishes. Real gateway from a real file, the crossing fixture, the official SDK client.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { fileGateway, type FileGateway } from '../helpers/file-gateway.js';
import { FIXTURE } from '../helpers/gateway.js';
import { connectClient } from '../helpers/sdk.js';

const CROSSING = join(import.meta.dirname, '..', 'fixtures', 'crossing-server.mjs');
const base = {
  server: { host: '127.0.0.1', port: 0 },
  metrics: { enabled: false },
  logging: { level: process.env.LOG_LEVEL ?? 'silent' },
  pinning: { mode: 'off' },
};
const fixture = { name: 'fx', transport: 'stdio', ...FIXTURE };
const perSession = (args: string[]) => ({ name: 'u', transport: 'stdio', command: process.execPath, args, sandbox: 'none', sharing: 'per-session', initTimeoutMs: 2000, pool: { acquireTimeoutMs: 2000 } });

describe('a reload that replaces a per-session upstream under a subscription', () => {
  let fg: FileGateway;
  let subscriber: Client;
  let other: Client;
  before(async () => {
    fg = await fileGateway('swb-reload-sub-', {
      ...base,
      upstreams: [perSession([CROSSING]), fixture],
      endpoints: [
        { path: '/mcp', upstreams: ['u'] },
        { path: '/old', upstreams: ['fx'] },
      ],
    });
    subscriber = await connectClient(fg.gw, 'streamable-http');
    other = await connectClient(fg.gw, 'streamable-http', { path: '/old' });
  });
  after(async () => {
    await subscriber?.close().catch(() => {});
    await other?.close().catch(() => {});
    await fg?.close();
  });

  it('is applied, and ends the sessions of the endpoint it removed', async () => {
    await subscriber.subscribeResource({ uri: 'file:///watched' });
    const registry = fg.app.gateway.registry;
    assert.equal(registry.list().length, 2);
    // The new command exits at once: the session gets no instance of the new pool.
    fg.write({ ...base, upstreams: [perSession(['-e', 'process.exit(3)']), fixture], endpoints: [{ path: '/mcp', upstreams: ['u'] }] });
    const { report } = await fg.app.reload('test');
    assert.equal(report.result, 'applied', JSON.stringify(report));
    assert.deepEqual(report.changes?.endpoints.removed, ['/old']);
    assert.deepEqual(
      registry.list().map(({ session }) => session.endpoint.config.path),
      ['/mcp'],
      'the session of the removed endpoint ended',
    );
  });
});
