// Before a pooled sandbox uid goes back to the pool, whatever still runs as it is killed: a helper a
// server started in a session of its own outlives the group kill (found by a review). Real processes;
// changing a child's uid needs root, so the test runs only as root (the gateway pools uids only then).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { killProcessesOf } from '../../../src/sandbox/uid-reaper.js';
import { alive } from '../../helpers/processes.js';
import { waitFor } from '../../helpers/wait.js';

const root = process.getuid?.() === 0;

describe('killProcessesOf', () => {
  it('kills a detached process of the uid, in a session of its own, and leaves other users\' processes alone', { skip: !root && 'needs root' }, async () => {
    const uid = 1_900_065_000 + Math.floor(Math.random() * 500);
    const helper = spawn('setsid', ['sleep', '60'], { uid, gid: 65534, detached: true, stdio: 'ignore' });
    const other = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
    try {
      assert.ok(await waitFor(() => helper.pid !== undefined && alive(helper.pid)), 'the helper started');
      assert.ok(killProcessesOf(uid) >= 1);
      assert.ok(await waitFor(() => !alive(helper.pid!), { timeoutMs: 5000 }), 'a process of the uid survived');
      assert.ok(alive(other.pid!), 'a process of another user was killed');
      assert.equal(killProcessesOf(uid), 0);
    } finally {
      for (const p of [helper, other]) if (p.pid) try { process.kill(p.pid, 'SIGKILL'); } catch {}
    }
  });
});
