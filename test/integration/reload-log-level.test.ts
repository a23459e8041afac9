// A reload that replaces an upstream's pool (its settings changed) gives a session new instances: new servers,
// which know no logging/setLevel and send what they choose by default (the fixture: warnings and worse). Its
// subscriptions followed it there, its log level did not: a 2025 session that had asked for debug got only
// warnings and errors from then on. Now the session's level is set on the instances a reload gives it.
// That level was the one the session asked for last, refused or not: one the upstream had refused (the session
// keeping the level it had, or none) was set on the new instances, so the session got other lines than before the
// reload, and than an instance that takes it over without a reload is set to. Now the level in effect, or none.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { fileGateway, type FileGateway } from '../helpers/file-gateway.js';
import { ALL_LEVELS as ALL, leveledLogUpstream, sessionLevels } from '../helpers/leveled-log-upstream.js';
import { connectClient } from '../helpers/sdk.js';

const doc = (sharing: 'shared' | 'per-session', generation: string, env: Record<string, string> = {}) => ({
  server: { host: '127.0.0.1', port: 0 },
  metrics: { enabled: false },
  logging: { level: process.env.LOG_LEVEL ?? 'silent' },
  pinning: { mode: 'off' },
  upstreams: [leveledLogUpstream('u', sharing, { env: { GENERATION: generation, ...env } })],
  endpoints: [{ path: '/mcp', upstreams: ['u'] }],
});

describe('a session’s log level, across a reload that replaces its upstream’s pool', () => {
  const open: Array<{ fg: FileGateway; client: Client }> = [];
  after(async () => {
    for (const { fg, client } of open) {
      await client.close().catch(() => {});
      await fg.close();
    }
  });

  for (const sharing of ['per-session', 'shared'] as const) {
    it(`${sharing}: the new instances are set to the level the session asked for`, { timeout: 60_000 }, async () => {
      const fg = await fileGateway('swb-reload-level-', doc(sharing, '1'));
      const client = await connectClient(fg.gw, 'streamable-http');
      open.push({ fg, client });
      await client.setLoggingLevel('debug');
      assert.deepEqual(await sessionLevels(client), ALL);
      fg.write(doc(sharing, '2'));
      const { report } = await fg.app.reload('test');
      assert.equal(report.result, 'applied', JSON.stringify(report));
      assert.deepEqual(await sessionLevels(client), ALL, 'the new instance was set to debug');
    });

    it(`${sharing}: a level the upstream refused is not set on the new instances (none succeeded: none)`, { timeout: 60_000 }, async () => {
      const fg = await fileGateway('swb-reload-level-', doc(sharing, '1', { FAIL_SET_LEVEL: '1' }));
      const client = await connectClient(fg.gw, 'streamable-http');
      open.push({ fg, client });
      await assert.rejects(client.setLoggingLevel('debug'), /not now/);
      assert.deepEqual(await sessionLevels(client), ['warning', 'error'], 'the upstream kept its default');
      fg.write(doc(sharing, '2'));
      const { report } = await fg.app.reload('test');
      assert.equal(report.result, 'applied', JSON.stringify(report));
      assert.deepEqual(await sessionLevels(client), ['warning', 'error'], 'the new instance was left at its default');
    });
  }

  it('per-session: after a refused setLevel, the new instance is set to the level the session had', { timeout: 60_000 }, async () => {
    const fg = await fileGateway('swb-reload-level-', doc('per-session', '1', { REFUSE_LEVEL: 'error' }));
    const client = await connectClient(fg.gw, 'streamable-http');
    open.push({ fg, client });
    await client.setLoggingLevel('info');
    await assert.rejects(client.setLoggingLevel('error'), /not now/);
    assert.deepEqual(await sessionLevels(client), ['info', 'warning', 'error'], 'still at info');
    fg.write(doc('per-session', '2'));
    const { report } = await fg.app.reload('test');
    assert.equal(report.result, 'applied', JSON.stringify(report));
    assert.deepEqual(await sessionLevels(client), ['info', 'warning', 'error'], 'the new instance was set to info');
  });
});
