// A pooled uid must be one no process runs as. The pool knows only its own gateway's instances: a server
// a crashed gateway left running (the limits profile has no --die-with-parent), or one of another gateway
// on the same host, may run as a uid this pool thinks free. Real processes; changing a child's uid needs
// root, so the test runs only as root (the gateway pools uids only then).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { UID_BASE, UidPool } from '../../../src/sandbox/uid-pool.js';
import { runningUids } from '../../../src/sandbox/uid-reaper.js';
import { alive } from '../../helpers/processes.js';
import { waitFor } from '../../helpers/wait.js';

const root = process.getuid?.() === 0;

describe('UidPool', () => {
  it('passes over a uid that a process runs as already (a crashed gateway\'s server, another gateway\'s)', { skip: !root && 'needs root' }, async () => {
    // Far from where other gateways on this host (tests running beside this one) start handing out ids.
    const index = 60_000 + Math.floor(Math.random() * 5000);
    const orphan = spawn('sleep', ['60'], { uid: UID_BASE + index, gid: 65534, detached: true, stdio: 'ignore' });
    try {
      assert.ok(await waitFor(() => orphan.pid !== undefined && alive(orphan.pid)), 'the orphan runs');
      const pool = new UidPool(index);
      const uid = await pool.acquire();
      assert.notEqual(uid, UID_BASE + index, "handed out the uid an orphan still runs as: the new instance would share a user with it");
      assert.equal(uid, UID_BASE + index + 1, 'the next one instead');
      // Once that process is gone, the uid is handed out again.
      orphan.kill('SIGKILL');
      assert.ok(await waitFor(() => orphan.exitCode !== null || orphan.signalCode !== null));
      assert.equal(await new UidPool(index).acquire(), UID_BASE + index);
    } finally {
      if (orphan.exitCode === null && orphan.signalCode === null) orphan.kill('SIGKILL');
    }
  });

  it("passes over a uid that owns a leftover home (a crashed gateway's instance's), and has the home removed by its user", { skip: !root && 'needs root' }, async () => {
    // Below the other tests' ids. After a crash the servers die with the gateway (pdeathsig), so their ids
    // look free, but their homes stay: the next instance given such an id could read what the last one kept.
    const index = 50_000 + Math.floor(Math.random() * 5000);
    const uid = UID_BASE + index;
    const home = join('/tmp', `switchboard-home-${randomBytes(6).toString('hex')}`);
    // A token cache in a folder its owner cannot write (as Go leaves its module cache): rm -rf alone fails on it.
    const cache = join(home, 'cache');
    mkdirSync(cache, { recursive: true, mode: 0o700 });
    writeFileSync(join(cache, 'token'), 'the last tenant\'s');
    for (const p of [home, cache, join(cache, 'token')]) chownSync(p, uid, 65534);
    chmodSync(cache, 0o555);
    try {
      const first = await new UidPool(index).acquire();
      assert.notEqual(first, uid, 'handed out the uid that owns a leftover home: the new instance could read it');
      assert.equal(first, uid + 1, 'the next one instead');
      assert.ok(await waitFor(() => !existsSync(home)), 'the leftover home was not removed');
      assert.ok(await waitFor(async () => !(await runningUids()).has(uid)), 'its removal ended');
      assert.equal(await new UidPool(index).acquire(), uid, 'once its home is gone, the uid is handed out again');
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('reads which users run a process once per acquire, however many ids it passes over', async () => {
    // Another gateway's block of busy ids where this pool starts: each used to cost a walk of /proc.
    const index = 1000;
    const busy = new Set([0, 1, 2, 3, 4].map((i) => UID_BASE + index + i));
    let scans = 0;
    const pool = new UidPool(index, { running: async () => (scans++, busy), homes: () => new Map() });
    assert.equal(await pool.acquire(), UID_BASE + index + 5, 'the first id no process runs as');
    assert.equal(scans, 1, `one scan of the running processes, not one per busy id: ${scans}`);
    assert.equal(await pool.acquire(), UID_BASE + index + 6);
    assert.equal(scans, 2);
  });

  it('serves the event loop while it reads which users run a process (a walk of /proc held every request)', async () => {
    // The real walk of /proc: with a thousand processes it took 120 ms, at each instance start, on the event loop.
    const pool = new UidPool(2000, { homes: () => new Map() });
    let served = false;
    setImmediate(() => (served = true));
    const uid = await pool.acquire();
    assert.equal(served, true, 'the walk of /proc ran to its end before the event loop could serve anything else');
    assert.ok(uid >= UID_BASE, 'a pooled id');
  });

  it('never gives one id to two acquires that wait for their walks at once', async () => {
    const pool = new UidPool(3000, { running: async () => new Set([UID_BASE + 3000]), homes: () => new Map() });
    const ids = await Promise.all([pool.acquire(), pool.acquire(), pool.acquire()]);
    assert.deepEqual(ids, [UID_BASE + 3001, UID_BASE + 3002, UID_BASE + 3003]);
    assert.equal(pool.size, 3);
  });

  it('two pools (two gateways on one host) start at different places in the range', async () => {
    // No leftover homes: a pool removes those it finds, and this test has none to give.
    const starts = new Set(await Promise.all(Array.from({ length: 8 }, () => new UidPool(undefined, { homes: () => new Map() }).acquire())));
    assert.ok(starts.size > 1, `eight pools all started at ${[...starts].join()}`);
  });
});
