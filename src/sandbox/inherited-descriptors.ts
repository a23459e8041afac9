import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';

/** O_CLOEXEC among a descriptor's flags as /proc/<pid>/fdinfo shows them (octal). */
const O_CLOEXEC = 0o2000000;

/**
 * Descriptors the gateway holds without close-on-exec, which every child would get beyond its stdio. Node
 * opens its own close-on-exec (files, sockets, pipes), so these are what the gateway was started with: a
 * wrapper script's `40<key.pem`, a supervisor's or a CI runner's pipe. Passed on, they led out of any
 * sandbox (bubblewrap closes nothing it inherits): a server read the file, or wrote into the pipe.
 * Found once, at the first start (a busy gateway holds thousands of sockets, all close-on-exec); each
 * start checks again only those, some of which the gateway may have closed since. Linux: elsewhere
 * /proc cannot be read and none are found.
 */
export class InheritedDescriptors {
  #candidates: number[] | undefined;

  /** The descriptors a child started now would inherit, beyond 0, 1 and 2. */
  current(): number[] {
    this.#candidates ??= listed();
    this.#candidates = this.#candidates.filter(inheritable);
    return this.#candidates;
  }
}

/**
 * Those below the open-file limit: spawn cannot put /dev/null at a number past it (dup2 refuses, and the
 * start failed with EINVAL, every start, for a gateway given a descriptor before its limit was lowered:
 * `9<file; ulimit -n 1024` in a wrapper whose shell held descriptor 2xx). Those past it are still inherited,
 * as before this class; a gateway started that way has more open than it may open.
 */
function listed(): number[] {
  try {
    const limit = openFileLimit();
    return readdirSync('/proc/self/fd').map(Number).filter((fd) => fd > 2 && fd < limit);
  } catch {
    return [];
  }
}

/** The soft RLIMIT_NOFILE (/proc/self/limits; Node has no getrlimit). */
function openFileLimit(): number {
  const soft = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
  return soft === undefined || soft === 'unlimited' ? Infinity : Number(soft);
}

function inheritable(fd: number): boolean {
  try {
    const flags = /^flags:\s*([0-7]+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1];
    return flags !== undefined && (parseInt(flags, 8) & O_CLOEXEC) === 0;
  } catch {
    return false; // closed meanwhile (the directory's own descriptor among them)
  }
}

/**
 * A child's stdio: its three pipes, and `nul` (an open /dev/null) at the number of each inherited
 * descriptor, which the child then gets in its place (spawn dup2s it there); the rest left as they are.
 */
export function childStdio(inherited: readonly number[], nul: number | undefined): Array<'pipe' | 'ignore' | number> {
  const stdio: Array<'pipe' | 'ignore' | number> = ['pipe', 'pipe', 'pipe'];
  if (nul === undefined || inherited.length === 0) return stdio;
  const last = Math.max(...inherited);
  for (let fd = 3; fd <= last; fd++) stdio.push(inherited.includes(fd) ? nul : 'ignore');
  return stdio;
}

/** The gateway's own, for its helpers (one look at /proc/self/fd per gateway, as for its servers). */
const HELPERS = new InheritedDescriptors();

/**
 * spawn for the gateway's helpers that run as a sandbox user (the probe, the kill of a pooled uid's
 * processes, a home's removal): like a server, a helper gets /dev/null where the gateway holds an inherited
 * descriptor. It runs as that user, so a process of the user (a limits server, the leftover the kill is for)
 * could open /proc/<helper>/fd/N while it runs, and read the file (a wrapper's `40<key.pem`) through it.
 * `stdio`: the helper's own three.
 */
export function spawnHelper(file: string, args: readonly string[], options: SpawnOptions & { stdio: ['pipe' | 'ignore', 'pipe' | 'ignore', 'pipe' | 'ignore'] }): ChildProcess {
  const inherited = HELPERS.current();
  const nul = inherited.length > 0 ? openSync('/dev/null', 'r') : undefined;
  try {
    return spawn(file, args, { ...options, stdio: [...options.stdio, ...childStdio(inherited, nul).slice(3)] });
  } finally {
    if (nul !== undefined) closeSync(nul); // the helper has its copies once spawn returns
  }
}
