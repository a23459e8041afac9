// A stdio start that fails before its process exists gives back what was reserved for it (onExit: a root
// gateway's pooled sandbox uid, a limits instance's home folder, made just before). Out of descriptors,
// the /dev/null put in place of the gateway's inherited descriptors could not be opened, and start()
// failed without it: each restart attempt of a gateway at its descriptor limit kept a uid and a folder.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const HELPER = join(import.meta.dirname, '..', '..', 'helpers', 'start-without-descriptors.ts');

describe('a stdio start refused for want of descriptors', () => {
  it('fails saying so, and gives back what was reserved for the process', () => {
    const run = spawnSync('bash', ['-c', 'ulimit -n 64 && exec "$@"', 'sh', process.execPath, '--import', 'tsx', HELPER], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    const { failed, exits } = JSON.parse(run.stdout.trim().split('\n').pop()!) as { failed?: string; exits: number };
    // Out of descriptors at the /dev/null it opens, or (one freed meanwhile by an await of the start) at the spawn.
    assert.match(failed ?? '', /cannot start ".*": (?:spawn \S+ )?EMFILE/);
    assert.equal(exits, 1, 'onExit was not called: the pooled uid and the home stay taken');
  });
});

describe('a stdio program that cannot be executed (found by a review)', () => {
  it("tells clients the upstream and an incident id, never the host's paths; the log has the reason", async () => {
    const { mkdtempSync, rmSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { parseConfig } = await import('../../../src/config/load.js');
    const { createLogger } = await import('../../../src/observability/logger.js');
    const { UpstreamInstance } = await import('../../../src/upstream/upstream-instance.js');
    const { UpstreamTransports } = await import('../../../src/upstream/transport-factory.js');
    const dir = mkdtempSync(join(tmpdir(), 'swb-noexec-'));
    try {
      // There (the plan finds it), but not executable: spawn fails with EACCES naming the file.
      const program = join(dir, 'server.sh');
      writeFileSync(program, '#!/bin/sh\nexit 0\n', { mode: 0o644 });
      const cfg = parseConfig({ upstreams: [{ name: 'noexec', transport: 'stdio', command: program, sandbox: 'none' }], endpoints: [{ path: '/mcp', upstreams: ['noexec'] }] }, 'test', {}, dir);
      const logged: Array<Record<string, unknown>> = [];
      const logger = createLogger('info', { write: (line: string) => void logged.push(JSON.parse(line)) });
      const inst = new UpstreamInstance(cfg.upstreams[0]!, logger, new UpstreamTransports().create);
      try {
        await assert.rejects(inst.start());
        const err = await inst.request('tools/list', undefined, {}).then(() => undefined, (e: Error) => e);
        assert.ok(err, 'the request succeeded');
        assert.doesNotMatch(err.message, new RegExp(dir), `a client hears the host's path: ${err.message}`);
        assert.match(err.message, /upstream "noexec".*incident [0-9a-f]{12}/);
        assert.ok(logged.some((l) => JSON.stringify(l).includes(`${program}`) && /EACCES/.test(JSON.stringify(l))), 'the log does not say why');
      } finally {
        await inst.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
