import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * Per-process figures from /proc (Linux only). CPU is the process's own utime+stime, never its
 * children's, so a gateway is not charged for the upstream it spawned.
 */

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** Fields of /proc/<pid>/stat after the command name, which may itself contain spaces and parentheses. */
function statFields(pid: number, tid?: number): string[] | undefined {
  let text: string;
  try {
    text = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  return text.slice(text.lastIndexOf(')') + 2).split(' ');
}

/** CPU time (user + system) the process itself has used, in milliseconds; undefined once it is gone. */
export function cpuMs(pid: number): number | undefined {
  const f = statFields(pid);
  if (!f) return undefined;
  // After "pid (comm) ": [0] state, [1] ppid, … [11] utime, [12] stime (fields 14 and 15 of proc(5)).
  return ((Number(f[11]) + Number(f[12])) * 1000) / clockTicks();
}

/**
 * CPU time (user + system) of one thread of a process, in milliseconds. A Node.js process's main
 * thread (tid = pid) runs its event loop: near 100 % of a core it is the limit, whatever the GC and
 * libuv threads add to the process's total.
 */
export function threadCpuMs(pid: number, tid: number = pid): number | undefined {
  const f = statFields(pid, tid);
  return f && ((Number(f[11]) + Number(f[12])) * 1000) / clockTicks();
}

/** Resident set size in bytes. */
export function rssBytes(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Every live descendant of pid (children, grandchildren, …), found by walking parent pids in /proc. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const f = statFields(Number(name));
    if (!f || f[0] === 'Z') continue; // a zombie holds no resources worth counting
    const ppid = Number(f[1]);
    let list = children.get(ppid);
    if (!list) children.set(ppid, (list = []));
    list.push(Number(name));
  }
  const out: number[] = [];
  const stack = [pid];
  while (stack.length) {
    for (const c of children.get(stack.pop()!) ?? []) {
      out.push(c);
      stack.push(c);
    }
  }
  return out;
}

/** Summed RSS of a set of processes (those that vanished in between count as zero). */
export function totalRss(pids: readonly number[]): number {
  let sum = 0;
  for (const p of pids) sum += rssBytes(p) ?? 0;
  return sum;
}

/** Polls until the process has at most `max` descendants or the time is up; returns the last count. */
export async function waitForDescendants(pid: number, max: number, timeoutMs: number): Promise<number> {
  const until = Date.now() + timeoutMs;
  let n = descendants(pid).length;
  while (n > max && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 100));
    n = descendants(pid).length;
  }
  return n;
}

/**
 * CPU time the whole machine spent in user and system mode (irq/softirq left out: loopback packet
 * processing lands there and belongs to the benchmark as much as to anyone), in milliseconds.
 */
export function machineBusyMs(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , , , steal = 0] = f;
  return ((user + nice + system + steal) * 1000) / clockTicks();
}

/** CPU of a process and all its live descendants (for the harness: itself, the gateway, the upstreams). */
export function treeCpuMs(pid: number): number {
  let sum = cpuMs(pid) ?? 0;
  for (const d of descendants(pid)) sum += cpuMs(d) ?? 0;
  return sum;
}

/**
 * Measures how much CPU other processes on the machine used while `fn` ran, in percent of one core.
 * Other work on a shared 2-core box is the main source of noise; phases that saw much of it are retried.
 */
export async function withForeignLoad<T>(fn: () => Promise<T>): Promise<{ value: T; foreignPct: number }> {
  const t0 = performance.now();
  const busy0 = machineBusyMs();
  const ours0 = treeCpuMs(process.pid);
  const value = await fn();
  const ours = treeCpuMs(process.pid) - ours0;
  const busy = machineBusyMs() - busy0;
  return { value, foreignPct: Math.max(0, ((busy - ours) / (performance.now() - t0)) * 100) };
}
