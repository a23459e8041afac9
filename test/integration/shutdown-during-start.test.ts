// A stop that comes while the gateway is still starting (SIGTERM while an upstream is slow to answer
// its initialize): the start must not go on to open its listeners after the stop closed them.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { buildApp } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/observability/logger.js';
import { startServe } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

/**
 * A stdio upstream that never answers initialize, and lingers after its stdin closes (until its SIGTERM):
 * its start fails while the stop is still stopping it, and the start goes on meanwhile.
 */
function stuckServer(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'swb-slow-start-')), 'stuck.mjs');
  writeFileSync(file, 'process.stdin.resume();\nsetInterval(() => {}, 1000);\n');
  return file;
}

describe('a stop while the gateway starts', { timeout: 90_000 }, () => {
  it('in process: listen() does not open the listeners after close()', async () => {
    const config = parseConfig({
      server: { host: '127.0.0.1', port: 0 },
      metrics: { port: 0 },
      auth: { mode: 'none' },
      upstreams: [{ name: 'stuck', transport: 'stdio', sandbox: 'none', command: process.execPath, args: [stuckServer()], sharing: 'shared', initTimeoutMs: 60_000 }],
      endpoints: [{ path: '/mcp', upstreams: ['stuck'] }],
    });
    const app = await buildApp(config, { logger: createLogger('silent') });
    const listening = app.listen().then((a) => a, (e: Error) => e);
    assert.ok(await waitFor(() => app.gateway.pools.get('stuck')!.instances.size > 0, { timeoutMs: 20_000 }), 'the upstream never started');
    await app.close(0);
    const outcome = await listening;
    assert.ok(outcome instanceof Error, `listen() resolved with ${String(outcome)} after close()`);
    assert.equal(app.fastify.server.listening, false, 'the MCP listener was opened after close()');
    assert.equal(app.metricsUrl, undefined, 'the metrics listener was opened after close()');
  });

  it('serve: SIGTERM during start exits 0 without ever saying it listens', async () => {
    const s = startServe(
      'swb-term-start-',
      `upstreams:
  - { name: stuck, transport: stdio, sandbox: none, command: ${process.execPath}, args: [${stuckServer()}], sharing: shared, initTimeoutMs: 60000 }
endpoints: [{ path: /mcp, upstreams: [stuck] }]
`,
    );
    try {
      assert.ok(await waitFor(() => s.log().includes('starting upstream process'), { timeoutMs: 30_000 }), s.log());
    } finally {
      s.child.kill('SIGTERM');
    }
    assert.equal((await s.exited).code, 0, s.log());
    assert.doesNotMatch(s.log(), /switchboard listening|Server listening/, 'it listened after the stop began');
  });
});
