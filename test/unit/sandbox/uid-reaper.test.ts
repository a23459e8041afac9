// Before a pooled sandbox uid goes back to the pool, whatever still runs as it is killed: a helper a
// server started in a session of its own outlives the group kill (found by a review). Real processes;
// changing a child's uid needs root, so the test runs only as root (the gateway pools uids only then).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { killProcessesOf } from '../../../src/sandbox/uid-reaper.js';
import { alive } from '../../helpers/processes.js';
import { waitFor } from '../../helpers/wait.js';

const root = process.getuid?.() === 0;
const PYTHON = ['/usr/bin/python3', '/bin/python3'].find((p) => existsSync(p));

/**
 * A process whose main thread ends on its own (the exit system call, not exit_group) while another thread
 * runs on: its /proc entry then reads "State: Z (zombie)", as a dead process waiting to be reaped would.
 * Any native code can do it; Python through ctypes, here.
 */
const MAIN_THREAD_EXITS = [
  'import ctypes, os, threading, time',
  'threading.Thread(target=lambda: time.sleep(600)).start()',
  "ctypes.CDLL(None).syscall({'x86_64': 60, 'aarch64': 93}[os.uname().machine], 0)",
].join('\n');

const state = (pid: number): string | undefined => {
  try {
    return /^State:\s+(\S)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  } catch {
    return undefined;
  }
};

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

  it('kills a process whose main thread has exited while another thread runs on (its /proc entry reads as a zombie)', { skip: (!root && 'needs root') || (!PYTHON && 'needs python3') }, async () => {
    const uid = 1_900_065_500 + Math.floor(Math.random() * 500);
    const helper = spawn(PYTHON!, ['-c', MAIN_THREAD_EXITS], { uid, gid: 65534, detached: true, stdio: 'ignore' });
    let exited = false;
    helper.once('exit', () => (exited = true));
    try {
      assert.ok(await waitFor(() => helper.pid !== undefined && state(helper.pid) === 'Z'), 'the main thread exited, the process runs on');
      assert.equal(exited, false, 'still running (a thread of it)');
      assert.ok(killProcessesOf(uid) >= 1, 'found');
      assert.ok(await waitFor(() => exited, { timeoutMs: 5000 }), 'a process of the uid survived');
      assert.equal(killProcessesOf(uid), 0);
    } finally {
      if (!exited && helper.pid) try { process.kill(helper.pid, 'SIGKILL'); } catch {}
    }
  });
});
