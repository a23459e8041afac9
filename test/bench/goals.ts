import type { Agreement } from './agree.js';
import type { Loader, TargetFigures, ThroughputFigure } from './measure.js';
import type { PairedLoad } from './paired-floor.js';
import type { UpstreamName } from './targets.js';

/**
 * The issue's goals (#20), evaluated on one run: every figure as a ratio to the thin proxy's (what
 * passes or misses) and to the best peer's, with the conditions of the phases it came from beside it.
 */

/** The load loop's thread at or above this share of one core: the client, not the target, may be the limit. */
export const LOADER_BOUND_PCT = 90;

/** The conditions one figure was measured under. */
export interface PhaseNote extends Agreement {
  /** Other processes' CPU during the phase, % of one core. */
  foreignPct: number;
  /** The harness's main thread (the load loop), % of one core; undefined where /proc has no thread figure. */
  loaderPct?: number;
  loaderBound: boolean;
}

export interface Goal {
  upstream: UpstreamName;
  /** era: a modern target against the JSON session variant (bestPeer names it). */
  kind?: 'era';
  goal: string;
  target: string;
  measured: string;
  /** The thin proxy's figure in the same run, and the target's as a multiple of it. */
  thin?: string;
  vsThin?: number;
  /**
   * The same ratio measured side by side with the thin proxy (paired-floor.ts), with its rounds' lowest
   * and highest; where there is one, it is the ratio judged. For an era goal: side by side with the JSON
   * session variant (measureEraPaired), or without a range the quotient of the two targets' pairings
   * with the thin proxy.
   */
  paired?: { ratio: number; range?: [number, number] };
  bestPeer: string;
  vsPeer?: number;
  /** The ratio the threshold is applied to. */
  ratio: number;
  threshold: string;
  pass: boolean;
  /** The target's phase, and the one it is compared with (the thin proxy's, or the JSON variant's). */
  phases?: { target?: PhaseNote; ref?: PhaseNote };
  /** Either phase had its load loop at LOADER_BOUND_PCT or more. */
  loaderBound?: boolean;
  note?: string;
}

const f1 = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '–' : x >= 100 ? x.toFixed(0) : x.toFixed(1));
const f2 = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '–' : x.toFixed(2));
const f3 = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '–' : x.toFixed(3));
const int = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '–' : Math.round(x).toLocaleString('en-US'));

/** A phase counts for comparison only if every call in it got its own answer back. */
export function clean(t: ThroughputFigure | undefined): ThroughputFigure | undefined {
  return t && t.errors === 0 && t.mismatches === 0 ? t : undefined;
}

/** The side-by-side load figure of a target at `sessions` × 64 in flight, if it has one without errors. */
export function pairedLoadOf(f: TargetFigures, sessions: number): PairedLoad | undefined {
  const p = f.paired?.load.find((x) => x.sessions === sessions && x.inflight === 64);
  return p && p.errors === 0 ? p : undefined;
}

/** A 2026-07-28 target's load side by side with its JSON session variant, at `sessions` clients × 64, if without errors. */
export function eraPairedOf(f: TargetFigures, sessions: number): PairedLoad | undefined {
  const p = f.eraPaired?.find((x) => x.sessions === sessions && x.inflight === 64);
  return p && p.errors === 0 ? p : undefined;
}

export function tput(f: TargetFigures, loader: Loader, sessions: number, inflight: number): ThroughputFigure | undefined {
  return f.throughput.find((t) => t.loader === loader && t.sessions === sessions && t.inflight === inflight);
}

function isPeer(f: TargetFigures): boolean {
  return f.family === 'supergateway' || f.family === 'mcp-proxy';
}

export function loaderBound(p: { loaderMainPct?: number; loaderCpuPct?: number } | undefined): boolean {
  const pct = p?.loaderMainPct ?? p?.loaderCpuPct;
  return pct !== undefined && pct >= LOADER_BOUND_PCT;
}

/** What a phase's figure was measured under, from a throughput or sequential figure (JSON: spread may be null). */
export function phaseNote(p: (Partial<Agreement> & { foreignPct: number; loaderMainPct?: number; loaderCpuPct?: number }) | undefined): PhaseNote | undefined {
  if (!p) return undefined;
  const loaderPct = p.loaderMainPct ?? p.loaderCpuPct;
  return { foreignPct: p.foreignPct, attempts: p.attempts ?? 1, agreed: p.agreed ?? false, spreadPct: p.spreadPct ?? NaN, ...(loaderPct === undefined ? {} : { loaderPct }), loaderBound: loaderBound(p) };
}

/** Best peer by a figure: the lowest (`min`) or highest value among peers that produced one. */
function best(figs: TargetFigures[], value: (f: TargetFigures) => number | undefined, dir: 'min' | 'max'): { f: TargetFigures; v: number } | undefined {
  let out: { f: TargetFigures; v: number } | undefined;
  for (const f of figs.filter(isPeer)) {
    const v = value(f);
    if (v === undefined || !Number.isFinite(v)) continue;
    if (!out || (dir === 'min' ? v < out.v : v > out.v)) out = { f, v };
  }
  return out;
}

interface RatioGoal {
  goal: string;
  /** The figure, lower or higher being better, and its phase. */
  value: (f: TargetFigures) => number | undefined;
  phase: (f: TargetFigures) => PhaseNote | undefined;
  better: 'min' | 'max';
  show: (v: number) => string;
  /** Which Switchboard variants the goal applies to, and the multiple of the thin proxy's figure each needs. */
  limit: (f: TargetFigures) => number | undefined;
  /** The ratio to the thin proxy measured side by side, where the run has one. */
  paired?: (f: TargetFigures) => Goal['paired'];
}

function ratioGoals(upstream: UpstreamName, figs: TargetFigures[], g: RatioGoal): Goal[] {
  const thin = figs.find((f) => f.family === 'floor');
  const tv = thin && g.value(thin);
  const peer = best(figs, g.value, g.better);
  const goals: Goal[] = [];
  for (const f of figs.filter((x) => x.family === 'switchboard')) {
    const limit = g.limit(f);
    const v = g.value(f);
    if (limit === undefined || v === undefined) continue;
    const vsThin = tv !== undefined && tv > 0 ? v / tv : NaN;
    const paired = g.paired?.(f);
    const judged = paired && Number.isFinite(paired.ratio) ? paired.ratio : vsThin;
    const phases = { target: g.phase(f), ref: thin && g.phase(thin) };
    const bound = (phases.target?.loaderBound ?? false) || (phases.ref?.loaderBound ?? false);
    goals.push({
      upstream,
      goal: g.goal,
      target: f.target,
      measured: g.show(v),
      ...(tv === undefined ? {} : { thin: g.show(tv) }),
      vsThin,
      ...(paired ? { paired } : {}),
      bestPeer: peer ? `${peer.f.target} ${g.show(peer.v)}` : '–',
      vsPeer: peer ? v / peer.v : NaN,
      ratio: judged,
      threshold: `${g.better === 'min' ? '≤' : '≥'} ${limit}`,
      pass: Number.isFinite(judged) && (g.better === 'min' ? judged <= limit : judged >= limit),
      phases,
      loaderBound: bound,
      ...(Number.isFinite(judged) ? {} : { note: 'no usable thin-proxy figure in this run' }),
    });
  }
  return goals;
}

/** The issue's goals for every Switchboard variant, against the thin proxy and the best peer of the same run. */
export function evaluateGoals(upstream: UpstreamName, figs: TargetFigures[]): Goal[] {
  const goals: Goal[] = [];
  const shared = (f: TargetFigures) => f.sharing === 'shared';
  // Gateway CPU per call: shared variants may spend 1.2× the thin proxy's, per-session ones 1.5×.
  goals.push(
    ...ratioGoals(upstream, figs, {
      goal: 'gateway CPU per call (raw, 1 session × 64 in flight)',
      value: (f) => clean(tput(f, 'raw', 1, 64))?.gatewayCpuMsPerCall,
      phase: (f) => phaseNote(tput(f, 'raw', 1, 64)),
      better: 'min',
      show: (v) => `${f3(v)} ms`,
      limit: (f) => (shared(f) ? 1.2 : 1.5),
      paired: (f) => {
        const p = pairedLoadOf(f, 1);
        return p && { ratio: p.cpuRatio, range: p.cpuRange };
      },
    }),
  );
  for (const sessions of [1, 50]) {
    goals.push(
      ...ratioGoals(upstream, figs, {
        goal: `throughput at 64 in flight (raw, ${sessions === 1 ? '1 session' : `${sessions} sessions`})`,
        value: (f) => clean(tput(f, 'raw', sessions, 64))?.callsPerSec,
        phase: (f) => phaseNote(tput(f, 'raw', sessions, 64)),
        better: 'max',
        show: (v) => `${int(v)}/s`,
        limit: (f) => (shared(f) ? 1 : undefined),
        paired: (f) => {
          const p = pairedLoadOf(f, sessions);
          return p && { ratio: p.throughputRatio, range: p.throughputRange };
        },
      }),
    );
  }
  const direct = figs.find((f) => f.family === 'direct')?.sequential;
  if (direct) {
    const latency = ratioGoals(upstream, figs, {
      goal: 'added sequential p50 latency over direct (SDK client)',
      value: (f) => (f.sequential && f.family !== 'direct' ? f.sequential.p50Ms - direct.p50Ms : undefined),
      phase: (f) => phaseNote(f.sequential),
      better: 'min',
      show: (v) => `+${f3(v)} ms`,
      limit: () => 1.2,
      paired: (f) => (f.paired?.sequential ? { ratio: f.paired.sequential.addedRatio } : undefined),
    });
    // The direct floor is subtracted from both sides: say so when its own runs did not agree.
    if (direct.agreed === false) for (const g of latency) g.note = `${g.note ? `${g.note}; ` : ''}direct/stdio's runs disagree (${f1(direct.spreadPct)} %)`;
    goals.push(...latency);
  }
  for (const f of figs.filter((s) => s.family === 'switchboard' && s.sharing === 'per-session')) {
    if (!f.setupSdk) continue;
    const ratio = f.setupSdk.p50Ms / 10;
    goals.push({ upstream, goal: 'per-session setup p50 ≤ 10 ms with warm spares (SDK connect)', target: f.target, measured: `${f2(f.setupSdk.p50Ms)} ms (raw ${f2(f.setupRaw?.p50Ms)} ms)`, bestPeer: '–', ratio, threshold: '≤ 1 (× 10 ms)', pass: ratio <= 1 });
  }
  for (const f of figs.filter((s) => s.family === 'switchboard' && s.big)) {
    const big = f.big!;
    const ratio = big.rssMB / 512;
    goals.push({ upstream, goal: '10,000 sessions on a shared upstream within 512 MB RSS', target: f.target, measured: `${int(big.sessions)} sessions, ${f1(big.rssMB)} MB`, bestPeer: '–', ratio, threshold: '≤ 1 (× 512 MB) and 10,000 open', pass: ratio <= 1 && big.sessions >= 10_000 });
  }
  const peerCrossed = figs.filter((f) => isPeer(f) && f.crossed).map((f) => `${f.target} ${f.crossed!.crossed}/${f.crossed!.calls}`).join(', ');
  for (const f of figs.filter((s) => s.family === 'switchboard' && s.crossed)) {
    const wrong = f.crossed!.crossed + f.crossed!.stray + f.throughput.reduce((s, t) => s + t.mismatches, 0);
    goals.push({ upstream, goal: 'zero crossed responses (colliding ids, 50 sessions; and every load phase)', target: f.target, measured: `${wrong} crossed/stray of ${int(f.crossed!.calls)} + load calls`, bestPeer: `peers: ${peerCrossed}`, ratio: wrong, threshold: '= 0', pass: wrong === 0 });
  }
  goals.push(...eraGoals(upstream, figs));
  return goals;
}

/**
 * The issue's goal for 2026-07-28 clients: stateless requests cost the gateway no more CPU per call,
 * and go no slower, than the JSON session variant of the same sharing mode in the same run.
 */
function eraGoals(upstream: UpstreamName, figs: TargetFigures[]): Goal[] {
  const goals: Goal[] = [];
  for (const f of figs.filter((x) => x.family === 'switchboard' && x.transport === 'modern-json')) {
    const ref = figs.find((x) => x.family === 'switchboard' && x.transport === 'streamable-json' && x.sharing === f.sharing);
    if (!ref) continue;
    const base = { upstream, kind: 'era' as const, target: f.target };
    const note = (sessions: number) => {
      const phases = { target: phaseNote(tput(f, 'raw', sessions, 64)), ref: phaseNote(tput(ref, 'raw', sessions, 64)) };
      return { phases, loaderBound: (phases.target?.loaderBound ?? false) || (phases.ref?.loaderBound ?? false) };
    };
    // Side by side: measured against the JSON variant itself in alternating rounds (measureEraPaired),
    // with the rounds' range; failing that, the quotient of the two targets' pairings with the thin
    // proxy, each over its own minutes (paired-floor.ts).
    const viaFloor = (sessions: number, pick: (p: PairedLoad) => number, pickRange: (p: PairedLoad) => [number, number]): Goal['paired'] => {
      const direct = eraPairedOf(f, sessions);
      if (direct) return { ratio: pick(direct), range: pickRange(direct) };
      const [m, j] = [pairedLoadOf(f, sessions), pairedLoadOf(ref, sessions)];
      return m && j ? { ratio: pick(m) / pick(j) } : undefined;
    };
    const cpu = (x: TargetFigures) => clean(tput(x, 'raw', 1, 64))?.gatewayCpuMsPerCall;
    const [mc, jc] = [cpu(f), cpu(ref)];
    if (mc !== undefined && jc !== undefined) {
      const paired = viaFloor(1, (p) => p.cpuRatio, (p) => p.cpuRange);
      const ratio = paired ? paired.ratio : mc / jc;
      goals.push({ ...base, ...note(1), goal: 'modern stateless: gateway CPU per call no worse than the JSON session variant (raw, 1 client × 64 in flight)', measured: `${f3(mc)} ms`, bestPeer: `${ref.target} ${f3(jc)} ms`, vsPeer: mc / jc, ...(paired ? { paired } : {}), ratio, threshold: '≤ 1', pass: ratio <= 1 });
    }
    for (const sessions of [1, 50]) {
      const rate = (x: TargetFigures) => clean(tput(x, 'raw', sessions, 64))?.callsPerSec;
      const [mr, jr] = [rate(f), rate(ref)];
      if (mr === undefined || jr === undefined) continue;
      const paired = viaFloor(sessions, (p) => p.throughputRatio, (p) => p.throughputRange);
      const ratio = paired ? paired.ratio : mr / jr;
      goals.push({ ...base, ...note(sessions), goal: `modern stateless: throughput no worse than the JSON session variant (raw, ${sessions === 1 ? '1 client' : `${sessions} clients`} × 64 in flight)`, measured: `${int(mr)}/s`, bestPeer: `${ref.target} ${int(jr)}/s`, vsPeer: mr / jr, ...(paired ? { paired } : {}), ratio, threshold: '≥ 1', pass: ratio >= 1 });
    }
  }
  return goals;
}
