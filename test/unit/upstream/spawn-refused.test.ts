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
    assert.match(failed ?? '', /cannot start ".*": EMFILE/);
    assert.equal(exits, 1, 'onExit was not called: the pooled uid and the home stay taken');
  });
});
