import { closeAll, percentile, runLoad, type BenchSession, type Limits } from './load.js';
import { RawHttp, openRaw } from './load-raw.js';
import { openSdkSession } from './load-sdk.js';
import { cpuMs, withForeignLoad } from './proc-stats.js';
import type { RunningTarget } from './targets.js';

/**
 * The #20 ratios measured side by side with the thin proxy, in the same full run. A figure measured in a
 * target's own phase is divided by the thin proxy's from minutes earlier, and on this shared machine
 * the speed of everything drifts by a third over minutes: in one full run a target's gateway CPU and
 * the load loop's CPU per call both came out 1.45× those of the phase before it, with no other load
 * on the machine (the host's neighbours are not visible from inside). So the thin proxy is kept running
 * for the whole run and, after each target's own phases, the load alternates between the two in short
 * rounds (floor first in even rounds, the target first in odd ones, so that a steady drift falls on
 * both alike): the ratio is taken over the same minutes. It is the ratio the goals judge; the
 * unpaired figures stay in the tables.
 */

export interface PairedOptions {
  rounds: number;
  /** One half of a load round (each side gets one per round). */
  chunk: Limits;
  /** One half of a sequential round (SDK client, one call at a time). */
  sequentialChunk: Limits;
}

export interface PairedSide {
  calls: number;
  cpuMs: number;
  ms: number;
}

/** Gateway CPU per call and calls/s, target against the thin proxy, over alternating rounds. */
export interface PairedLoad {
  sessions: number;
  inflight: number;
  rounds: number;
  target: PairedSide;
  floor: PairedSide;
  /** Target CPU per call over the floor's, all rounds pooled. */
  cpuRatio: number;
  /** Target calls/s over the floor's, all rounds pooled. */
  throughputRatio: number;
  /** The lowest and highest ratio of a single round: how far the rounds spread. */
  cpuRange: [number, number];
  throughputRange: [number, number];
  errors: number;
  foreignPct: number;
}

/** Sequential p50 latency over direct, target against the thin proxy, over alternating rounds. */
export interface PairedSequential {
  rounds: number;
  calls: { direct: number; floor: number; target: number };
  p50Ms: { direct: number; floor: number; target: number };
  /** (target p50 − direct p50) / (floor p50 − direct p50), samples of all rounds pooled. */
  addedRatio: number;
  errors: number;
  foreignPct: number;
}

const side = (): PairedSide => ({ calls: 0, cpuMs: 0, ms: 0 });
const range = (xs: number[]): [number, number] => [Math.min(...xs), Math.max(...xs)];

/** One chunk of load on one side, its calls, wall time and (where there is a process) CPU added to the side. */
async function chunk(pid: number | undefined, sessions: readonly BenchSession[], inflight: number, limits: Limits, into: PairedSide, keep?: number[]): Promise<{ calls: number; cpuMs: number; ms: number; errors: number }> {
  const c0 = pid === undefined ? 0 : (cpuMs(pid) ?? NaN);
  const r = await runLoad(sessions, inflight, limits, keep);
  const c1 = pid === undefined ? 0 : (cpuMs(pid) ?? NaN);
  const out = { calls: r.calls, cpuMs: c1 - c0, ms: r.elapsedMs, errors: r.errors + r.mismatches };
  into.calls += out.calls;
  into.cpuMs += out.cpuMs;
  into.ms += out.ms;
  return out;
}

/**
 * `n` raw sessions on a target, on a connection pool of their own, closed with them: the floor stays up
 * for the whole run, and each pairing's idle keep-alive connections would otherwise pile up on it.
 */
async function openEach(t: RunningTarget, n: number): Promise<{ sessions: BenchSession[]; close(): Promise<void> }> {
  if (t.access.kind === 'stdio' || !t.origin) throw new Error(`${t.spec.id}: no HTTP access to pair with`);
  const http = new RawHttp(t.origin);
  const sessions: BenchSession[] = [];
  const close = async () => {
    await closeAll(sessions);
    await http.close();
  };
  try {
    for (let i = 0; i < n; i++) sessions.push(await openRaw(http, t.access));
  } catch (err) {
    await close();
    throw err;
  }
  return { sessions, close };
}

/** Raw load at `inflight` over `sessions` sessions on each side, alternating. */
export async function pairedLoad(floor: RunningTarget, target: RunningTarget, sessions: number, inflight: number, o: PairedOptions): Promise<PairedLoad> {
  const floorSide = await openEach(floor, sessions);
  let targetSide;
  try {
    targetSide = await openEach(target, sessions);
  } catch (err) {
    await floorSide.close();
    throw err;
  }
  const [fs, ts] = [floorSide.sessions, targetSide.sessions];
  try {
    // Each side warmed on these sessions first: the target's JIT is warm from its own phases, but a
    // fresh set of sessions, and a floor idle for minutes, have first calls of their own.
    await runLoad(fs, inflight, o.chunk);
    await runLoad(ts, inflight, o.chunk);
    const { value, foreignPct } = await withForeignLoad(async () => {
      const f = side();
      const t = side();
      const cpu: number[] = [];
      const rate: number[] = [];
      let errors = 0;
      for (let round = 0; round < o.rounds; round++) {
        const runFloor = () => chunk(floor.pid, fs, inflight, o.chunk, f);
        const runTarget = () => chunk(target.pid, ts, inflight, o.chunk, t);
        let a;
        let b;
        if (round % 2 === 0) {
          a = await runFloor();
          b = await runTarget();
        } else {
          b = await runTarget();
          a = await runFloor();
        }
        errors += a.errors + b.errors;
        cpu.push(b.cpuMs / b.calls / (a.cpuMs / a.calls));
        rate.push(b.calls / b.ms / (a.calls / a.ms));
      }
      return { f, t, cpu, rate, errors };
    });
    return {
      sessions,
      inflight,
      rounds: o.rounds,
      target: value.t,
      floor: value.f,
      cpuRatio: value.t.cpuMs / value.t.calls / (value.f.cpuMs / value.f.calls),
      throughputRatio: value.t.calls / value.t.ms / (value.f.calls / value.f.ms),
      cpuRange: range(value.cpu),
      throughputRange: range(value.rate),
      errors: value.errors,
      foreignPct,
    };
  } finally {
    await floorSide.close();
    await targetSide.close();
  }
}

/**
 * Sequential calls through the official SDK client on the upstream directly, through the thin proxy and
 * through the target, in rotating order each round; p50 of each side over all its rounds.
 */
export async function pairedSequential(direct: RunningTarget, floor: RunningTarget, target: RunningTarget, o: PairedOptions): Promise<PairedSequential> {
  const opened: BenchSession[] = [];
  try {
    for (const t of [direct, floor, target]) opened.push(await openSdkSession(t.access));
    const [ds, fs, ts] = opened as [BenchSession, BenchSession, BenchSession];
    for (const s of opened) await runLoad([s], 1, o.sequentialChunk);
    const { value, foreignPct } = await withForeignLoad(async () => {
      const samples = { direct: [] as number[], floor: [] as number[], target: [] as number[] };
      let errors = 0;
      const order = [
        ['direct', ds],
        ['floor', fs],
        ['target', ts],
      ] as const;
      for (let round = 0; round < o.rounds; round++) {
        for (let k = 0; k < order.length; k++) {
          const [name, s] = order[(k + round) % order.length]!;
          const r = await runLoad([s], 1, o.sequentialChunk, samples[name]);
          errors += r.errors + r.mismatches;
        }
      }
      return { samples, errors };
    });
    const p50 = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 0.5);
    const p50Ms = { direct: p50(value.samples.direct), floor: p50(value.samples.floor), target: p50(value.samples.target) };
    return {
      rounds: o.rounds,
      calls: { direct: value.samples.direct.length, floor: value.samples.floor.length, target: value.samples.target.length },
      p50Ms,
      addedRatio: (p50Ms.target - p50Ms.direct) / (p50Ms.floor - p50Ms.direct),
      errors: value.errors,
      foreignPct,
    };
  } finally {
    await closeAll(opened);
  }
}
