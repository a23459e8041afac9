// The gateway's own helpers that run as a sandbox user (the sandbox probe, the kill of a pooled uid's
// leftovers, the removal of a limits home) were spawned with every descriptor the gateway inherited without
// close-on-exec (a wrapper's `40<key.pem`), which servers never get (inherited-descriptors.test.ts): a
// process of that user (a limits server, the leftover the kill is for) could open /proc/<helper>/fd/40
// while the helper ran. A real probe, in a real process started as such a wrapper starts the gateway.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';

const SECRET = `swb-helper-secret-${process.pid}`;
const dir = mkdtempSync(join(tmpdir(), 'swb-helper-fd-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Runs a probe whose command says what its fd 40 leads to (as its failure, the one output a probe keeps). */
const GATEWAY = `
const { SandboxProbe } = await import(${JSON.stringify(resolve('src/sandbox/sandbox-probe.ts'))});
const plan = { profile: 'limits', probe: { file: '/bin/sh', args: ['-c', 'cat /proc/self/fd/40 >&2 || echo none >&2; exit 1'] }, pooledUser: false };
try { await new SandboxProbe().check(plan); } catch (err) { process.stdout.write(err.message); }
`;

describe('the gateway\'s helpers and descriptors it inherited (found by a review)', () => {
  it('a sandbox probe gets /dev/null where the gateway has an inherited descriptor', () => {
    const key = join(dir, 'key.pem');
    writeFileSync(key, SECRET);
    const run = spawnSync('bash', ['-c', 'exec "$@" 40<"$KEY"', 'sh', process.execPath, '--import', 'tsx', '--input-type=module', '-e', GATEWAY], { env: { ...process.env, KEY: key }, encoding: 'utf8' });
    assert.match(run.stdout, /cannot be set up here/, `the probe ran and failed: ${run.stdout} ${run.stderr}`);
    assert.doesNotMatch(run.stdout, new RegExp(SECRET), 'the probe read the file its gateway had open at fd 40');
  });
});
