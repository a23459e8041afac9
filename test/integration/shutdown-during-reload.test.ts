// A stop (SIGTERM) that comes while a reload waits for a new upstream to start: the stop waits for the
// reload (else the reload's pools would outlive it), and a new upstream that never answers its
// initialize was waited for for its whole initTimeoutMs (30 s by default), past the stop's grace and
// past what an orchestrator leaves before SIGKILL. The stop ends that start instead.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileGateway } from '../helpers/file-gateway.js';
import { alive } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

const ECHO = resolve('deploy/examples/echo-server.mjs');

function doc(extra: Array<Record<string, unknown>> = []): Record<string, unknown> {
  const echo = { name: 'echo', transport: 'stdio', sandbox: 'none', command: process.execPath, args: [ECHO], sharing: 'shared' };
  return {
    server: { host: '127.0.0.1', port: 0 },
    metrics: { enabled: false },
    auth: { mode: 'none' },
    upstreams: [echo, ...extra],
    endpoints: [{ path: '/mcp', upstreams: ['echo', ...extra.map((u) => u.name)] }],
  };
}

describe('a stop during a reload', { timeout: 120_000 }, () => {
  it('ends the start of a new upstream that does not answer, instead of waiting out its initTimeoutMs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'swb-stuck-'));
    const stuck = join(dir, 'stuck.mjs');
    const pidFile = join(dir, 'pid');
    // Never answers initialize; says who it is.
    writeFileSync(stuck, `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(pidFile)}, String(process.pid));\nsetInterval(() => {}, 1000);\n`);
    const { app, write, close } = await fileGateway('swb-stop-reload-', doc());
    write(doc([{ name: 'stuck', transport: 'stdio', sandbox: 'none', command: process.execPath, args: [stuck], sharing: 'shared', initTimeoutMs: 600_000 }]));
    const reloading = app.reload('test');
    assert.ok(await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '', { timeoutMs: 20_000 }), 'the new upstream never started');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    // Bounded: before the fix this waited the upstream's whole initTimeoutMs (10 minutes).
    const stopped = await Promise.race([close().then(() => 'stopped'), new Promise((r) => setTimeout(r, 30_000, 'still stopping'))]);
    assert.equal(stopped, 'stopped');
    const { report } = await reloading;
    assert.notEqual(report.result, 'applied', 'a reload cut by the stop is not applied');
    assert.ok(await waitFor(() => !alive(pid), { timeoutMs: 10_000 }), 'the new upstream process outlived the gateway');
    assert.equal(app.gateway.pools.has('stuck'), false);
  });
});
