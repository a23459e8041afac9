// A reload that replaces an upstream's pool (its settings changed) gives a session new instances: new servers,
// which know no logging/setLevel and send what they choose by default (the fixture: warnings and worse). Its
// subscriptions followed it there, its log level did not: a 2025 session that had asked for debug got only
// warnings and errors from then on. Now the session's level is set on the instances a reload gives it.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { fileGateway, type FileGateway } from '../helpers/file-gateway.js';
import { ALL_LEVELS as ALL, leveledLogUpstream, sessionLevels } from '../helpers/leveled-log-upstream.js';
import { connectClient } from '../helpers/sdk.js';

const doc = (sharing: 'shared' | 'per-session', generation: string) => ({
  server: { host: '127.0.0.1', port: 0 },
  metrics: { enabled: false },
  logging: { level: process.env.LOG_LEVEL ?? 'silent' },
  pinning: { mode: 'off' },
  upstreams: [leveledLogUpstream('u', sharing, { env: { GENERATION: generation } })],
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
  }
});
