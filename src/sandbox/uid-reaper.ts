import { spawnHelper } from './inherited-descriptors.js';
import { readdir, readFile } from 'node:fs/promises';

/** How long the kill helper may take before its uid is given up on (see killEveryProcessAs). */
const HELPER_WAIT_MS = 5000;
/** A helper killed by someone else (a process of the uid can signal it) is run again, this many times in all. */
const HELPER_ATTEMPTS = 3;

/** What a reap found, and whether nothing of the uid can be left running: only then may it be handed out again. */
export interface Reaped {
  found: number;
  cleared: boolean;
  /** Why not cleared. */
  reason?: string;
}

/**
 * Kills every process running as `uid` (real or effective id, from /proc), and says how many the walk
 * found. A pooled sandbox uid belongs to one instance; before it goes back to the pool, whatever still runs
 * as it goes too: a helper the server started in a session of its own (setsid, a detached spawn) outlives
 * the group kill, and a later instance given the same uid (another tenant's, another user's) would share a
 * user with it: signals, ptrace, its /proc/<pid>/environ with that instance's token. Linux only; where
 * /proc cannot be read, nothing is found. Resolves once the kill is done (never rejects); `cleared` false
 * means it could not be made sure of, and the uid must not be handed out again.
 */
export async function killProcessesOf(uid: number, gid: number): Promise<Reaped> {
  let found = 0;
  try {
    found = await processesOf(uid, (pid) => {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone, or not ours to kill (not root): nothing more to do here
      }
    });
  } catch (err) {
    return { found, cleared: false, reason: (err as Error).message };
  }
  let failed: string | undefined;
  for (let attempt = 0; attempt < HELPER_ATTEMPTS; attempt++) {
    failed = await killEveryProcessAs(uid, gid);
    if (failed === undefined) return { found, cleared: true };
  }
  return { found, cleared: false, reason: failed };
}

/**
 * The walk misses a helper that forks on and on, each parent exiting at once (a new pid every moment,
 * gone when its /proc entry is read): one walk missed such a helper 8 times in 10, and it ran on as the
 * uid the pool hands out again. kill(-1) from a process of that user signals every process the user owns
 * in one pass of the kernel's task list, during which no fork of theirs completes: nothing of the uid is
 * left but the caller, a shell's builtin (dash, bash and busybox take `kill -9 -1`; /bin/sh is on every
 * host, where a program of the gateway's own may not be readable by that user). A child beside the event
 * loop, not spawnSync: every client's request waited for it, at each exit of each upstream. Says why the
 * uid cannot be taken for cleared, or undefined once the helper exited on its own: it could not start,
 * it was killed (a process of the uid may signal it before its kill(-1) runs), or it did not exit in time
 * (stopped: killed, and not taken for done). Never for root or the gateway's own user, whose kill(-1)
 * reaches others.
 */
function killEveryProcessAs(uid: number, gid: number): Promise<string | undefined> {
  if (process.getuid?.() !== 0 || uid === 0) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const done = (reason: string | undefined) => (clearTimeout(timer), resolve(reason));
    try {
      const helper = spawnHelper('/bin/sh', ['-c', 'kill -9 -1'], { uid, gid, env: {}, stdio: ['ignore', 'ignore', 'ignore'] });
      helper.once('error', (err) => done(`the kill helper could not run: ${err.message}`));
      // Its exit status says only whether kill(-1) found anything (ESRCH when none): not a failure.
      helper.once('exit', (_code, signal) => done(signal === null ? undefined : `the kill helper was killed (${signal})`));
      timer = setTimeout(() => (helper.kill('SIGKILL'), done(`the kill helper did not exit within ${HELPER_WAIT_MS} ms`)), HELPER_WAIT_MS);
      // The helper holds the event loop (it ends within the wait, or is killed): the timer need not.
      timer.unref();
    } catch (err) {
      done(`the kill helper could not run: ${(err as Error).message}`);
    }
  });
}

/**
 * Every user id a live process runs as (real or effective; see killProcessesOf for which), from one walk
 * of /proc: the pool reads it once per acquire, rather than once per id it passes over.
 */
export async function runningUids(): Promise<Set<number>> {
  const uids = new Set<number>();
  await eachProcess((_pid, real, effective) => void uids.add(real).add(effective));
  return uids;
}

/** Calls `each` with the pid of every live process of `uid`; says how many it saw. */
async function processesOf(uid: number, each: (pid: number) => void): Promise<number> {
  let found = 0;
  await eachProcess((pid, real, effective) => {
    if (real !== uid && effective !== uid) return;
    found++;
    each(pid);
  });
  return found;
}

/** How many /proc entries are read at once: the rest of libuv's threadpool (4) stays free for DNS and files. */
const LANES = 2;

/**
 * Calls `visit` with every live process and its real and effective user ids. Read off the event loop: with
 * a thousand processes the walk took 120 ms (measured on a 2-core VM), and each instance start (each
 * session's, with per-session sharing) held every client's request that long.
 */
async function eachProcess(visit: (pid: number, real: number, effective: number) => void): Promise<void> {
  let pids: string[];
  try {
    pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name));
  } catch {
    return;
  }
  let next = 0;
  const lane = async () => {
    while (next < pids.length) {
      const pid = pids[next++]!;
      let status: string;
      try {
        status = await readFile(`/proc/${pid}/status`, 'utf8');
      } catch {
        continue; // gone meanwhile
      }
      const ids = /^Uid:\s+(\d+)\s+(\d+)/m.exec(status);
      if (!ids) continue;
      // A zombie with no thread left is dead, waiting for its parent to reap it. One whose main thread ended
      // on its own (the exit system call, not exit_group) reads as a zombie too, while its other threads run on.
      const threads = Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? 1);
      if (/^State:\s+Z/m.test(status) && threads <= 1) continue;
      visit(Number(pid), Number(ids[1]), Number(ids[2]));
    }
  };
  await Promise.all(Array.from({ length: LANES }, lane));
}
