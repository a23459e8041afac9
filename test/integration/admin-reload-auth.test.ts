// A reload must never leave the admin listener open to the network (found by a review). The listener's
// address (admin.enabled, host, port) only changes with a restart, but its token changed on a reload, and
// the check that an admin API off loopback authenticates its callers ran on the new file alone. So a
// file that turned the admin API off (or moved it to loopback) and dropped the token in the same edit
// was valid, and applied: the running listener on 0.0.0.0 kept listening with no authentication at all
// (end sessions, approve tools, read the config, from any machine). Real gateway from a real file.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { App } from '../../src/app.js';
import { fileGateway, type FileGateway } from '../helpers/file-gateway.js';
import { FIXTURE } from '../helpers/gateway.js';

const TOKEN = 'admin-token-for-reload-tests-0123456789-abc';

function doc(admin: Record<string, unknown>): Record<string, unknown> {
  return {
    server: { host: '127.0.0.1', port: 0 },
    metrics: { enabled: false },
    logging: { level: process.env.LOG_LEVEL ?? 'silent' },
    admin,
    upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
    endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
  };
}

describe('a reload that drops the admin token while the listener stays off loopback', () => {
  let fg: FileGateway;
  let app: App;
  /** The admin listener as reached from this machine (it listens on every address). */
  let admin: URL;

  before(async () => {
    fg = await fileGateway('swb-admin-reload-', doc({ enabled: true, host: '0.0.0.0', port: 0, token: TOKEN }));
    app = fg.app;
    admin = new URL(app.adminUrl!);
    admin.hostname = '127.0.0.1';
  });
  after(async () => {
    await fg?.close();
  });

  const get = async (token: string | null) => (await fetch(new URL('/sessions', admin), { headers: token ? { authorization: `Bearer ${token}` } : {} })).status;

  for (const [what, next] of [
    ['turned off', { enabled: false, host: '0.0.0.0' }],
    ['moved to loopback', { enabled: true, host: '127.0.0.1' }],
  ] as const) {
    it(`keeps asking for the token when the new file has the admin API ${what} and no token`, async () => {
      assert.equal(await get(null), 401, 'before the reload');
      fg.write(doc({ ...next, port: 0 }));
      try {
        const { report } = await app.reload('test');
        assert.notEqual(report.result, 'invalid', report.problems.join('; '));
        assert.equal(await get(null), 401, 'the listener on 0.0.0.0 still asks for a token');
        assert.equal(await get(TOKEN), 200, 'and takes the one it had');
        assert.ok(report.restartRequired.some((r) => r.startsWith('admin.token')), `the token kept is said: ${report.restartRequired.join('; ')}`);
      } finally {
        // Back to the file it started from, for the next case.
        fg.write(doc({ enabled: true, host: '0.0.0.0', port: 0, token: TOKEN }));
        await app.reload('test');
      }
    });
  }
});
