import { repeatUntilAgree, type Agreement } from './agree.js';
import { closeAll, openMany, percentile, runCrossed, runLoad, type BenchSession, type CrossedResult, type Limits } from './load.js';
import { RawHttp, openRaw, openRawStdio, openRawStreamable } from './load-raw.js';
import { openSdkSession } from './load-sdk.js';
import { pairedLoad, pairedSequential, type PairedLoad, type PairedOptions, type PairedSequential } from './paired-floor.js';
import { cpuMs, descendants, rssBytes, threadCpuMs, totalRss, treeCpuMs, waitForDescendants, withForeignLoad } from './proc-stats.js';
import type { RunningTarget, UpstreamName } from './targets.js';

/** How much of everything one run does; quick and full differ only in these numbers. */
export interface Mode {
  name: 'quick' | 'full';
  setupSessions: Record<UpstreamName, number>;
  /**
   * Gap between timed setups of targets that spawn per session, so warm spares can be replenished:
   * server-everything takes ~0.4 s of CPU to start, the echo server ~35 ms.
   */
  setupPaceMs: Record<UpstreamName, number>;
  /** Once per target before anything is measured: JIT tiers and heap sizing settle over thousands of calls. */
  targetWarmup: Limits;
  warmup: Limits;
  sequential: Limits;
  phase: Limits;
  inflight: number[];
  /** In-flight counts for the SDK client, on one session and (when sdkManySessions) across many. */
  sdkInflight: number[];
  sdkManySessions: Record<UpstreamName, boolean>;
  manySessions: number;
  crossedSessions: number;
  crossedRounds: number;
  openSessions: Record<UpstreamName, number>;
  /**
   * Every measured phase runs at least twice and again until two runs agree within agreePct (calls/s
   * and gateway CPU per call; sequential p50), at most maxAttempts times; runs after the second come
   * out of a run-wide time budget.
   */
  agreePct: number;
  maxAttempts: number;
  retryBudgetMs: number;
  /** Sessions opened on Switchboard shared for the memory goal; 0 skips it. */
  bigSessions: number;
  bigSessionsMaxMs: number;
  /** Rounds of the side-by-side phases with the thin proxy (paired-floor.ts). */
  paired: PairedOptions;
}

export const MODES: Record<'quick' | 'full', Mode> = {
  quick: {
    name: 'quick',
    setupSessions: { echo: 6, everything: 4 },
    setupPaceMs: { echo: 60, everything: 400 },
    targetWarmup: { maxCalls: 50_000, maxMs: 800 },
    warmup: { maxCalls: 3000, maxMs: 200 },
    sequential: { maxCalls: 150, maxMs: 800 },
    phase: { maxCalls: 50_000, maxMs: 250 },
    inflight: [1, 16, 64],
    sdkInflight: [1, 64],
    sdkManySessions: { echo: false, everything: false },
    manySessions: 50,
    crossedSessions: 50,
    crossedRounds: 10,
    // Spawning a node child per session costs ~35 ms of CPU each: 200 of them per target would not fit in
    // quick; 50 are the sessions of the many-sessions phase, reused.
    openSessions: { echo: 50, everything: 50 },
    agreePct: 10,
    maxAttempts: 3,
    retryBudgetMs: 30_000,
    bigSessions: 10_000,
    bigSessionsMaxMs: 45_000,
    paired: { rounds: 4, chunk: { maxCalls: 50_000, maxMs: 150 }, sequentialChunk: { maxCalls: 100, maxMs: 200 } },
  },
  full: {
    name: 'full',
    setupSessions: { echo: 25, everything: 8 },
    setupPaceMs: { echo: 100, everything: 500 },
    targetWarmup: { maxCalls: 100_000, maxMs: 2000 },
    warmup: { maxCalls: 20_000, maxMs: 600 },
    sequential: { maxCalls: 2000, maxMs: 3000 },
    phase: { maxCalls: 500_000, maxMs: 1000 },
    inflight: [1, 16, 64],
    sdkInflight: [1, 16, 64],
    // With server-everything the SDK client is the bottleneck anyway; its 50-session phases cost minutes of spawns.
    sdkManySessions: { echo: true, everything: false },
    manySessions: 50,
    crossedSessions: 50,
    crossedRounds: 40,
    // server-everything is a heavy process to spawn (~0.4 s of CPU): 50 per-session instances, not 200
    // (the sessions of the many-sessions phase, reused).
    openSessions: { echo: 200, everything: 50 },
    agreePct: 10,
    maxAttempts: 4,
    retryBudgetMs: 120_000,
    bigSessions: 10_000,
    bigSessionsMaxMs: 120_000,
    paired: { rounds: 8, chunk: { maxCalls: 200_000, maxMs: 500 }, sequentialChunk: { maxCalls: 250, maxMs: 400 } },
  },
};

export type Loader = 'raw' | 'sdk';

export interface Dist {
  n: number;
  p50Ms: number;
  p99Ms: number;
}

export interface ThroughputFigure extends Agreement {
  loader: Loader;
  sessions: number;
  inflight: number;
  calls: number;
  errors: number;
  mismatches: number;
  callsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** The gateway's own CPU (not its children's) per completed call. */
  gatewayCpuMsPerCall?: number;
  /** Gateway CPU over wall time; 100 means one core busy. */
  gatewayCpuPct?: number;
  /** The harness process (the load generator, all its threads) likewise. */
  loaderCpuPct: number;
  /** The harness's main thread, which runs the load loop: near 100 the client, not the target, is the limit. */
  loaderMainPct?: number;
  /** Other processes' CPU during the phase, in percent of one core (noise, not the target). */
  foreignPct: number;
  firstError?: string;
}

export interface TargetFigures {
  target: string;
  family: string;
  transport: string;
  sharing: string;
  upstream: UpstreamName;
  setupSdk?: Dist;
  setupRaw?: Dist;
  sequential?: Dist & Agreement & { foreignPct: number; loaderMainPct?: number };
  throughput: ThroughputFigure[];
  crossed?: CrossedResult;
  idleRssMB?: number;
  idleChildren?: number;
  open?: { sessions: number; failures: number; rssMB: number; children: number; childrenRssMB: number; childrenAfterClose: number };
  big?: { sessions: number; failures: number; seconds: number; rssMB: number; firstError?: string };
  /** Side by side with the thin proxy (paired-floor.ts): raw load at 64 in flight by session count, and sequential latency. */
  paired?: { load: PairedLoad[]; sequential?: PairedSequential };
  /**
   * A 2026-07-28 target side by side with the JSON session variant of its sharing mode (its "floor" side
   * is that variant): raw load at 64 in flight by client count, the era goals' figures.
   */
  eraPaired?: PairedLoad[];
  problems: string[];
}

const MB = 1024 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function opener(t: RunningTarget, loader: Loader, http: RawHttp | undefined): () => Promise<BenchSession> {
  const a = t.access;
  if (loader === 'sdk') return () => openSdkSession(a);
  if (a.kind === 'stdio') return () => openRawStdio(a.command, a.args);
  return () => openRaw(http!, a);
}

function dist(samples: number[]): Dist {
  const s = [...samples].sort((a, b) => a - b);
  return { n: s.length, p50Ms: percentile(s, 0.5), p99Ms: percentile(s, 0.99) };
}

/** Opens and closes sessions one at a time, timing the handshake (SDK: until connect() resolves). */
async function measureSetup(t: RunningTarget, loader: Loader, http: RawHttp | undefined, mode: Mode, upstream: UpstreamName): Promise<Dist> {
  const open = opener(t, loader, http);
  // Only gateways keep warm spares; the direct floor spawns on every setup whatever the pace.
  const spawnsPerSession = t.spec.sharing === 'per-session' && t.spec.family !== 'direct';
  await (await open()).close(); // warm-up: first-use costs are not setup costs
  const times: number[] = [];
  const deadline = performance.now() + 30_000;
  for (let i = 0; i < mode.setupSessions[upstream] && performance.now() < deadline; i++) {
    if (spawnsPerSession) await sleep(mode.setupPaceMs[upstream]);
    const t0 = performance.now();
    const s = await open();
    times.push(performance.now() - t0);
    await s.close();
  }
  return dist(times);
}

/**
 * Waits (at most maxMs) until the gateway and its children are nearly idle: after opening sessions on
 * a per-session target, spares are still being spawned, and their start-up (~0.4 s of CPU each for
 * server-everything) would otherwise be measured as part of the next phase.
 */
async function settle(pid: number | undefined, maxMs: number): Promise<void> {
  if (!pid) return;
  const until = performance.now() + maxMs;
  while (performance.now() < until) {
    const c0 = treeCpuMs(pid);
    await sleep(250);
    if (treeCpuMs(pid) - c0 < 25) return; // under 10 % of a core
  }
}

/**
 * Throughput at each in-flight count over `nSessions` sessions. `thenInspect`, when given, receives the
 * still-open sessions afterwards (and closes them), so the open-sessions figures need no second set.
 */
async function throughputPhases(t: RunningTarget, loader: Loader, nSessions: number, http: RawHttp | undefined, mode: Mode, out: TargetFigures, thenInspect?: (sessions: BenchSession[], childrenBefore: number) => Promise<void>): Promise<void> {
  const childrenBefore = t.pid ? descendants(t.pid).length : 0;
  const opened = await openMany(nSessions, 8, 60_000, opener(t, loader, http));
  let handedOver = false;
  try {
    if (opened.sessions.length < nSessions) throw new Error(`opened ${opened.sessions.length}/${nSessions} sessions: ${opened.firstError}`);
    await settle(t.pid, 15_000);
    const inflights = loader === 'raw' ? mode.inflight : mode.sdkInflight;
    await runLoad(opened.sessions, Math.max(...inflights), mode.warmup);
    for (const inflight of inflights) {
      // Agreement on calls/s and, where there is a gateway process, its CPU per call.
      const fig = await repeated(mode, () => phase(t, loader, opened.sessions, inflight, mode), (f) => (f.gatewayCpuMsPerCall === undefined ? [f.callsPerSec] : [f.callsPerSec, f.gatewayCpuMsPerCall]));
      out.throughput.push(fig);
    }
    if (thenInspect) {
      handedOver = true;
      await thenInspect(opened.sessions, childrenBefore);
    }
  } finally {
    if (!handedOver) await closeAll(opened.sessions);
  }
}

let retrySpentMs = 0;

/** A phase run until two runs agree (agree.ts); runs after the second are charged to the run's budget. */
function repeated<T extends { foreignPct: number }>(mode: Mode, run: () => Promise<T>, figures: (r: T) => number[]): Promise<T & Agreement> {
  const timed = async (attempt: number) => {
    const t0 = performance.now();
    const r = await run();
    if (attempt >= 2) retrySpentMs += performance.now() - t0;
    return r;
  };
  return repeatUntilAgree(timed, figures, { agreePct: mode.agreePct, maxAttempts: mode.maxAttempts, mayRepeat: () => retrySpentMs < mode.retryBudgetMs });
}

/** CPU of the harness while fn runs: the whole process and its main thread, in percent of one core. */
async function loaderCpu<T>(fn: () => Promise<T>): Promise<{ value: T; loaderCpuPct: number; loaderMainPct?: number }> {
  const t0 = performance.now();
  const own0 = process.cpuUsage();
  const main0 = threadCpuMs(process.pid);
  const value = await fn();
  const own = process.cpuUsage(own0);
  const main1 = threadCpuMs(process.pid);
  const ms = performance.now() - t0;
  const loaderMainPct = main0 === undefined || main1 === undefined ? undefined : ((main1 - main0) / ms) * 100;
  return { value, loaderCpuPct: ((own.user + own.system) / 1000 / ms) * 100, ...(loaderMainPct === undefined ? {} : { loaderMainPct }) };
}

async function phase(t: RunningTarget, loader: Loader, sessions: BenchSession[], inflight: number, mode: Mode): Promise<Omit<ThroughputFigure, keyof Agreement>> {
  const cpu0 = t.pid ? cpuMs(t.pid) : undefined;
  // Loader CPU inside, so the /proc walks of the foreign-load figure are not charged to the load loop.
  const { value: { value: r, ...own }, foreignPct } = await withForeignLoad(() => loaderCpu(() => runLoad(sessions, inflight, mode.phase)));
  const cpu1 = t.pid ? cpuMs(t.pid) : undefined;
  const fig: Omit<ThroughputFigure, keyof Agreement> = {
    loader,
    sessions: sessions.length,
    inflight,
    calls: r.calls,
    errors: r.errors,
    mismatches: r.mismatches,
    callsPerSec: r.callsPerSec,
    p50Ms: r.p50Ms,
    p99Ms: r.p99Ms,
    ...own,
    foreignPct,
    ...(r.firstError === undefined ? {} : { firstError: r.firstError }),
  };
  if (cpu0 !== undefined && cpu1 !== undefined) {
    fig.gatewayCpuMsPerCall = r.calls > 0 ? (cpu1 - cpu0) / r.calls : NaN;
    fig.gatewayCpuPct = ((cpu1 - cpu0) / r.elapsedMs) * 100;
  }
  return fig;
}

async function step(out: TargetFigures, name: string, fn: () => Promise<void>, log: (s: string) => void): Promise<void> {
  const t0 = performance.now();
  try {
    await fn();
  } catch (err) {
    const msg = `${name}: ${(err as Error).message}`;
    out.problems.push(msg);
    log(`  ! ${msg}`);
  }
  log(`  ${name} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
}

/** Every figure for one running target, phase by phase; a failed phase is recorded, not fatal. */
export async function measureTarget(t: RunningTarget, upstream: UpstreamName, mode: Mode, log: (s: string) => void): Promise<TargetFigures> {
  const openSessions = mode.openSessions[upstream];
  const out: TargetFigures = { target: t.spec.id, family: t.spec.family, transport: t.spec.transport, sharing: t.spec.sharing, upstream, throughput: [], problems: [] };
  const http = t.origin ? new RawHttp(t.origin) : undefined;
  const pid = t.pid;
  const direct = t.spec.family === 'direct';
  try {
    if (pid) {
      await sleep(300);
      out.idleRssMB = (rssBytes(pid) ?? NaN) / MB;
      out.idleChildren = descendants(pid).length;
    }
    await step(out, 'warm-up', async () => {
      // Short phases after a cold start measure V8's tiers rather than the server: in trials the
      // gateway needed several thousand calls before its CPU per call settled (0.77 -> 0.22 ms).
      const s = await opener(t, 'raw', http)();
      try {
        await runLoad([s], 64, mode.targetWarmup);
      } finally {
        await s.close();
      }
    }, log);
    await step(out, 'setup', async () => {
      out.setupSdk = await measureSetup(t, 'sdk', http, mode, upstream);
      out.setupRaw = await measureSetup(t, 'raw', http, mode, upstream);
    }, log);
    await step(out, 'sequential', async () => {
      const s = await openSdkSession(t.access);
      try {
        await runLoad([s], 1, mode.warmup);
        out.sequential = await repeated(mode, async () => {
          const { value: { value: r, loaderMainPct }, foreignPct } = await withForeignLoad(() => loaderCpu(() => runLoad([s], 1, mode.sequential)));
          if (r.errors > 0) out.problems.push(`sequential: ${r.errors} errors (${r.firstError})`);
          return { n: r.calls, p50Ms: r.p50Ms, p99Ms: r.p99Ms, foreignPct, ...(loaderMainPct === undefined ? {} : { loaderMainPct }) };
        }, (d) => [d.p50Ms]);
      } finally {
        await s.close();
      }
    }, log);
    /** Memory and children with the sessions open, the isolation check on them, then children after close. */
    const inspectOpen = async (sessions: BenchSession[], before: number, failures: number) => {
      let closed = false;
      try {
        await sleep(500);
        const kids = descendants(pid!);
        const open = { sessions: sessions.length, failures, rssMB: (rssBytes(pid!) ?? NaN) / MB, children: kids.length, childrenRss: totalRss(kids) };
        // The same sessions serve the isolation check: spawning another set would cost a child each.
        out.crossed = await runCrossed(sessions.slice(0, mode.crossedSessions), mode.crossedRounds, 30_000);
        await closeAll(sessions);
        closed = true;
        // A modern client's standing on the gateway outlives its last request until the idle timeout, so
        // a per-session instance it leased stays; waiting the full 10 s for it would measure nothing.
        const after = await waitForDescendants(pid!, before, t.spec.transport === 'modern-json' ? 1000 : 10_000);
        out.open = { sessions: open.sessions, failures: open.failures, rssMB: open.rssMB, children: open.children, childrenRssMB: open.childrenRss / MB, childrenAfterClose: after };
      } finally {
        if (!closed) await closeAll(sessions);
      }
    };
    // When the open-sessions count is the many-sessions count, the raw sessions of that phase serve both.
    const reuseForOpen = pid !== undefined && openSessions === mode.manySessions;
    for (const loader of ['raw', 'sdk'] as const) {
      for (const n of direct || (loader === 'sdk' && !mode.sdkManySessions[upstream]) ? [1] : [1, mode.manySessions]) {
        const inspect = reuseForOpen && loader === 'raw' && n === mode.manySessions ? (s: BenchSession[], before: number) => inspectOpen(s, before, 0) : undefined;
        await step(out, `throughput ${loader} ${n} session(s)${inspect ? `, then ${n} open sessions and crossed ids` : ''}`, () => throughputPhases(t, loader, n, http, mode, out, inspect), log);
      }
    }
    if (!pid) return out;
    if (!reuseForOpen) {
      await step(out, `${openSessions} open sessions, crossed ids`, async () => {
        const before = descendants(pid).length;
        const opened = await openMany(openSessions, 16, 90_000, opener(t, 'raw', http));
        await inspectOpen(opened.sessions, before, opened.failures);
      }, log);
    }
    if (t.spec.family === 'switchboard' && t.spec.sharing === 'shared' && t.spec.transport === 'streamable-json' && mode.bigSessions > 0) {
      await step(out, `${mode.bigSessions} sessions`, async () => {
        // A connection pool of its own: 10,000 initialize POSTs, kept as sessions on the gateway only.
        const big = new RawHttp(t.origin!, 64);
        try {
          const opened = await openMany(mode.bigSessions, 64, mode.bigSessionsMaxMs, () => openRawStreamable(big, '/mcp', { notifyInitialized: false }));
          await sleep(1000);
          out.big = {
            sessions: opened.sessions.length,
            failures: opened.failures,
            seconds: opened.elapsedMs / 1000,
            rssMB: (rssBytes(pid) ?? NaN) / MB,
            ...(opened.firstError === undefined ? {} : { firstError: opened.firstError }),
          };
          // Ended once measured: the phases after this one (side by side with the thin proxy, and with
          // the 2026-07-28 target) must not measure a gateway that carries 10,000 idle sessions in its
          // heap (every major GC marks them) when the targets it is compared with carry none.
          await closeAll(opened.sessions, 64);
        } finally {
          await big.close();
        }
      }, log);
    }
    return out;
  } finally {
    await http?.close();
  }
}

/**
 * A 2026-07-28 target side by side with the JSON session variant it is judged against (#14: "against the
 * JSON session variant in the same run"), kept running for it: the same alternating rounds as with the
 * thin proxy, so that both halves of the ratio come from the same minutes. Before this, the era ratio was
 * the quotient of two pairings with the thin proxy taken minutes apart, and the machine's drift between
 * them moved it by up to a fifth. 1 client and the many-sessions count, as the era goals have both for
 * either sharing mode.
 */
export async function measureEraPaired(out: TargetFigures, ref: RunningTarget, t: RunningTarget, mode: Mode, log: (s: string) => void): Promise<void> {
  const load: PairedLoad[] = [];
  out.eraPaired = load;
  for (const n of [1, mode.manySessions]) {
    await step(out, `paired with ${ref.spec.id}, ${n} client(s) × 64`, async () => {
      const p = await pairedLoad(ref, t, n, 64, mode.paired);
      if (p.errors > 0) throw new Error(`${p.errors} failed or wrong calls`);
      load.push(p);
    }, log);
  }
}

/**
 * The side-by-side phases of one target with the thin proxy (and, for latency, the upstream directly),
 * after its own phases: 1 session × 64 in flight, 50 sessions × 64 for shared targets (the throughput
 * goal is theirs), and sequential SDK calls. A failure is recorded as a problem; the target's own
 * figures stand.
 */
export async function measurePaired(out: TargetFigures, floor: RunningTarget, direct: RunningTarget | undefined, t: RunningTarget, mode: Mode, log: (s: string) => void): Promise<void> {
  const paired: NonNullable<TargetFigures['paired']> = { load: [] };
  out.paired = paired;
  const counts = t.spec.sharing === 'shared' ? [1, mode.manySessions] : [1];
  for (const n of counts) {
    await step(out, `paired with the thin proxy, ${n} session(s) × 64`, async () => {
      const p = await pairedLoad(floor, t, n, 64, mode.paired);
      if (p.errors > 0) throw new Error(`${p.errors} failed or wrong calls`);
      paired.load.push(p);
    }, log);
  }
  if (direct) {
    await step(out, 'paired sequential (direct, thin proxy, target)', async () => {
      const p = await pairedSequential(direct, floor, t, mode.paired);
      if (p.errors > 0) throw new Error(`${p.errors} failed or wrong calls`);
      paired.sequential = p;
    }, log);
  }
}
