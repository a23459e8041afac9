// A reload reads the file as check-config does, warnings included, but only the admin API's answer held
// them: a SIGHUP or the file watch (a ConfigMap edit) applied a file whose warnings nobody saw, where a
// start logs each one. The one here matters: the edit drops admin.token, so the admin API on loopback
// lets in every local caller, a stdio server sharing the gateway's network among them (it can approve
// its own pending tool pins). Real gateway from a real file, reloaded as SIGHUP reloads it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileGateway, type FileGateway } from '../helpers/file-gateway.js';
import { FIXTURE } from '../helpers/gateway.js';

const TOKEN = 'admin-token-for-reload-warnings-0123456789';

function doc(admin: Record<string, unknown>): Record<string, unknown> {
  return {
    server: { host: '127.0.0.1', port: 0 },
    metrics: { enabled: false },
    admin: { enabled: true, host: '127.0.0.1', port: 0, ...admin },
    // sandbox none: the fixture shares the gateway's network.
    upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
    endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
  };
}

describe("a reload's config warnings", () => {
  let fg: FileGateway;
  const lines: string[] = [];
  before(async () => (fg = await fileGateway('swb-reload-warnings-', doc({ token: TOKEN }), { logLines: lines })));
  after(() => fg?.close());

  it('are logged at warn, as at a start, when SIGHUP applies a file that drops the admin token', async () => {
    fg.write(doc({}));
    const { report } = await fg.app.reload('SIGHUP');
    assert.equal(report.result, 'applied', report.problems.join('; '));
    const warning = report.warnings.find((w) => w.startsWith('admin: the admin API'));
    assert.ok(warning, `the file's warning: ${report.warnings.join('; ')}`);
    const logged = lines.map((l) => JSON.parse(l) as { level: number; msg: string; trigger?: string }).filter((l) => l.msg === `config: ${warning}`);
    assert.equal(logged.length, 1, `logged once: ${lines.filter((l) => l.includes('admin API')).join('\n')}`);
    assert.equal(logged[0]!.level, 40, 'at warn');
    assert.equal(logged[0]!.trigger, 'SIGHUP');
  });
});
