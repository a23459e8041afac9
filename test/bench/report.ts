import type { Loader, TargetFigures, ThroughputFigure } from './measure.js';
import type { ProfileSummary } from './profile.js';
import type { UpstreamName } from './targets.js';

export interface RunInfo {
  mode: string;
  startedAt: string;
  seconds: number;
  /** Time until the figures were measured, before any profiling runs. */
  measuredSeconds: number;
  node: string;
  cpus: string;
  commit: string;
  dirty: boolean;
  peers: Record<string, string>;
  sdk: string;
  /** @modelcontextprotocol/client (SDK v2), the SDK client of the modern targets. */
  sdkModern?: string;
  build: string;
  /** 1-minute load average when the run started and ended: other work on the machine. */
  loadavg: [number, number];
}

export interface Goal {
  upstream: UpstreamName;
  /** peer: against the best peer (bestPeer); era: a modern target against the JSON session variant (bestPeer names it). */
  kind?: 'peer' | 'era';
  goal: string;
  target: string;
  measured: string;
  bestPeer: string;
  /** The thin proxy's figure and its ratio to the best peer: the best any Node.js gateway can do here. */
  floor?: string;
  ratio: number;
  threshold: string;
  pass: boolean;
}

export interface Profiled {
  target: string;
  upstream: UpstreamName;
  load: string;
  /** Whether only the samples of the measured load were counted. */
  window: boolean;
  summary: ProfileSummary;
}

const f1 = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '–' : x >= 100 ? x.toFixed(0) : x.toFixed(1));
const f2 = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '–' : x.toFixed(2));
const f3 = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '–' : x.toFixed(3));
const int = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '–' : Math.round(x).toLocaleString('en-US'));

/** A phase counts for comparison only if every call in it got its own answer back. */
function clean(t: ThroughputFigure | undefined): ThroughputFigure | undefined {
  return t && t.errors === 0 && t.mismatches === 0 ? t : undefined;
}

export function tput(f: TargetFigures, loader: Loader, sessions: number, inflight: number): ThroughputFigure | undefined {
  return f.throughput.find((t) => t.loader === loader && t.sessions === sessions && t.inflight === inflight);
}

function isPeer(f: TargetFigures): boolean {
  return f.family === 'supergateway' || f.family === 'mcp-proxy';
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

/** The issue's goals, each as a ratio against figures of the same run, for every Switchboard variant. */
export function evaluateGoals(upstream: UpstreamName, figs: TargetFigures[]): Goal[] {
  const goals: Goal[] = [];
  const swb = figs.filter((f) => f.family === 'switchboard');
  const direct = figs.find((f) => f.family === 'direct');
  const thin = figs.find((f) => f.family === 'floor');
  const floorOf = (value: (f: TargetFigures) => number | undefined, peer: number | undefined, show: (v: number) => string): string | undefined => {
    const v = thin && value(thin);
    return v === undefined || peer === undefined ? undefined : `${show(v)} (ratio ${f2(v / peer)})`;
  };
  const cpu = (f: TargetFigures) => clean(tput(f, 'raw', 1, 64))?.gatewayCpuMsPerCall;
  const bestCpu = best(figs, cpu, 'min');
  for (const f of swb) {
    const v = cpu(f);
    if (v === undefined || !bestCpu) continue;
    const ratio = v / bestCpu.v;
    goals.push({ upstream, goal: 'gateway CPU per call ≤ 1/4 of best peer (raw, 64 in flight)', target: f.target, measured: `${f3(v)} ms`, bestPeer: `${bestCpu.f.target} ${f3(bestCpu.v)} ms`, floor: floorOf(cpu, bestCpu.v, (x) => `${f3(x)} ms`), ratio, threshold: '≤ 0.25', pass: ratio <= 0.25 });
  }
  for (const sessions of [1, 50]) {
    const rate = (f: TargetFigures) => clean(tput(f, 'raw', sessions, 64))?.callsPerSec;
    const bestRate = best(figs, rate, 'max');
    for (const f of swb) {
      const v = rate(f);
      if (v === undefined || !bestRate) continue;
      const ratio = v / bestRate.v;
      goals.push({ upstream, goal: `throughput at 64 in flight ≥ 5× best peer (raw, ${sessions === 1 ? '1 session' : `${sessions} sessions`})`, target: f.target, measured: `${int(v)}/s`, bestPeer: `${bestRate.f.target} ${int(bestRate.v)}/s`, floor: floorOf(rate, bestRate.v, (x) => `${int(x)}/s`), ratio, threshold: '≥ 5', pass: ratio >= 5 });
    }
  }
  if (direct?.sequential) {
    const floor = direct.sequential.p50Ms;
    const added = (f: TargetFigures) => (f.sequential ? f.sequential.p50Ms - floor : undefined);
    const bestAdded = best(figs, added, 'min');
    for (const f of swb) {
      const v = added(f);
      if (v === undefined || !bestAdded) continue;
      const ratio = v / bestAdded.v;
      goals.push({ upstream, goal: 'added p50 latency over direct ≤ 1/2 of best peer (SDK, sequential)', target: f.target, measured: `+${f3(v)} ms`, bestPeer: `${bestAdded.f.target} +${f3(bestAdded.v)} ms`, floor: floorOf(added, bestAdded.v, (x) => `+${f3(x)} ms`), ratio, threshold: '≤ 0.5', pass: ratio <= 0.5 });
    }
  }
  for (const f of swb.filter((s) => s.sharing === 'per-session')) {
    if (!f.setupSdk) continue;
    const ratio = f.setupSdk.p50Ms / 10;
    goals.push({ upstream, goal: 'per-session setup p50 ≤ 10 ms with warm spares (SDK connect)', target: f.target, measured: `${f2(f.setupSdk.p50Ms)} ms (raw ${f2(f.setupRaw?.p50Ms)} ms)`, bestPeer: '–', ratio, threshold: '≤ 1', pass: ratio <= 1 });
  }
  for (const f of swb.filter((s) => s.big)) {
    const big = f.big!;
    const ratio = big.rssMB / 512;
    goals.push({ upstream, goal: `10,000 sessions on a shared upstream within 512 MB RSS`, target: f.target, measured: `${int(big.sessions)} sessions, ${f1(big.rssMB)} MB`, bestPeer: '–', ratio, threshold: '≤ 1 and 10,000 open', pass: ratio <= 1 && big.sessions >= 10_000 });
  }
  goals.push(...eraGoals(upstream, figs));
  const peerCrossed = figs.filter((f) => isPeer(f) && f.crossed).map((f) => `${f.target} ${f.crossed!.crossed}/${f.crossed!.calls}`).join(', ');
  for (const f of swb) {
    if (!f.crossed) continue;
    const wrong = f.crossed.crossed + f.crossed.stray + f.throughput.reduce((s, t) => s + t.mismatches, 0);
    goals.push({ upstream, goal: 'zero crossed responses (colliding ids, 50 sessions; and every load phase)', target: f.target, measured: `${wrong} crossed/stray of ${int(f.crossed.calls)} + load calls`, bestPeer: `peers: ${peerCrossed}`, ratio: wrong, threshold: '= 0', pass: wrong === 0 });
  }
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
    const cpu = (x: TargetFigures) => clean(tput(x, 'raw', 1, 64))?.gatewayCpuMsPerCall;
    const [mc, jc] = [cpu(f), cpu(ref)];
    if (mc !== undefined && jc !== undefined) {
      goals.push({ ...base, goal: 'modern stateless: gateway CPU per call no worse than the JSON session variant (raw, 1 client × 64 in flight)', measured: `${f3(mc)} ms`, bestPeer: `${ref.target} ${f3(jc)} ms`, ratio: mc / jc, threshold: '≤ 1', pass: mc <= jc });
    }
    for (const sessions of [1, 50]) {
      const rate = (x: TargetFigures) => clean(tput(x, 'raw', sessions, 64))?.callsPerSec;
      const [mr, jr] = [rate(f), rate(ref)];
      if (mr === undefined || jr === undefined) continue;
      goals.push({ ...base, goal: `modern stateless: throughput no worse than the JSON session variant (raw, ${sessions === 1 ? '1 client' : `${sessions} clients`} × 64 in flight)`, measured: `${int(mr)}/s`, bestPeer: `${ref.target} ${int(jr)}/s`, ratio: mr / jr, threshold: '≥ 1', pass: mr >= jr });
    }
  }
  return goals;
}

function latencyTable(figs: TargetFigures[]): string[] {
  const rows = ['| target | setup p50 / p99 ms (SDK) | setup p50 / p99 ms (raw) | sequential tools/call p50 / p99 ms (SDK) | added p50 over direct ms |', '|---|---|---|---|---|'];
  const floor = figs.find((f) => f.family === 'direct')?.sequential?.p50Ms;
  for (const f of figs) {
    const d = (x: { p50Ms: number; p99Ms: number } | undefined) => (x ? `${f2(x.p50Ms)} / ${f2(x.p99Ms)}` : '–');
    const added = f.sequential && floor !== undefined && f.family !== 'direct' ? f3(f.sequential.p50Ms - floor) : '–';
    rows.push(`| ${f.target} | ${d(f.setupSdk)} | ${d(f.setupRaw)} | ${d(f.sequential)} | ${added} |`);
  }
  return rows;
}

function throughputTable(figs: TargetFigures[], loader: Loader, inflight: number[], many: number): string[] {
  const cols: Array<[number, number]> = [];
  for (const s of [1, many]) for (const c of inflight) cols.push([s, c]);
  const head = cols.map(([s, c]) => `${s}s×${c}`);
  const rows = [
    `| target | ${head.join(' | ')} | gateway CPU ms/call (1s×64) | gateway CPU % (1s×64) | loader CPU % (1s×64) | other load % (max) | errors |`,
    `|---|${cols.map(() => '---:').join('|')}|---:|---:|---:|---:|---:|`,
  ];
  for (const f of figs) {
    const cells = cols.map(([s, c]) => int(tput(f, loader, s, c)?.callsPerSec));
    const at64 = tput(f, loader, 1, 64);
    const errors = f.throughput.filter((t) => t.loader === loader).reduce((sum, t) => sum + t.errors + t.mismatches, 0);
    const foreign = Math.max(0, ...f.throughput.filter((t) => t.loader === loader).map((t) => t.foreignPct));
    rows.push(`| ${f.target} | ${cells.join(' | ')} | ${f3(at64?.gatewayCpuMsPerCall)} | ${f1(at64?.gatewayCpuPct)} | ${f1(at64?.loaderCpuPct)} | ${f1(foreign)} | ${errors} |`);
  }
  return rows;
}

function resourceTable(figs: TargetFigures[], openSessions: number): string[] {
  const rows = [
    `| target | idle RSS MB | RSS MB @${openSessions} sessions | children idle / @${openSessions} / after close | children RSS MB @${openSessions} | RSS MB @10k sessions | crossed / stray (colliding ids) |`,
    '|---|---:|---:|---|---:|---:|---|',
  ];
  for (const f of figs) {
    if (f.family === 'direct') continue;
    const o = f.open;
    const big = f.big ? `${f1(f.big.rssMB)} (${int(f.big.sessions)} in ${f1(f.big.seconds)} s)` : '–';
    const crossed = f.crossed ? `${f.crossed.crossed} / ${f.crossed.stray} of ${f.crossed.calls}${f.crossed.errors ? ` (${f.crossed.errors} errors)` : ''}` : '–';
    rows.push(`| ${f.target} | ${f1(f.idleRssMB)} | ${o ? f1(o.rssMB) : '–'} | ${o ? `${f.idleChildren ?? '?'} / ${o.children} / ${o.childrenAfterClose}` : '–'} | ${o ? f1(o.childrenRssMB) : '–'} | ${big} | ${crossed} |`);
  }
  return rows;
}

export function renderMarkdown(info: RunInfo, results: Map<UpstreamName, TargetFigures[]>, goals: Goal[], profiles: Profiled[], shape: { inflight: number[]; many: number; openSessions: Record<UpstreamName, number> }): string {
  const out: string[] = [];
  out.push(`# Switchboard benchmark (${info.mode})`, '');
  out.push(`${info.startedAt}, ${info.measuredSeconds.toFixed(0)} s measuring${info.seconds > info.measuredSeconds + 1 ? ` + ${(info.seconds - info.measuredSeconds).toFixed(0)} s profiling` : ''} · ${info.cpus} · Node ${info.node} · commit ${info.commit}${info.dirty ? ' (+ uncommitted changes in src/)' : ''} · build: ${info.build} · load average ${info.loadavg[0].toFixed(1)} at start, ${info.loadavg[1].toFixed(1)} at end`);
  out.push(`Peers: ${Object.entries(info.peers).map(([k, v]) => `${k} ${v}`).join(', ')} · client: @modelcontextprotocol/sdk ${info.sdk}${info.sdkModern ? ` (modern targets: @modelcontextprotocol/client ${info.sdkModern} pinned to 2026-07-28)` : ''} and a raw undici client · all on loopback, one target at a time.`, '');
  out.push(
    'Goals compare each Switchboard variant with the best peer figure of the same run; a peer phase with errors or wrong answers is not eligible as "best". ' +
    'Reading the tables: `1s×64` is 64 calls in flight on one session, `50s×64` is 64 in flight spread over 50 sessions. ' +
      '"raw" is the lean load generator (hand-written JSON-RPC over undici keep-alive), "SDK" the official client. ' +
      'Gateway CPU is the gateway process\'s own utime+stime (children excluded) over a phase; loader CPU near 100 % means the one-process load generator, not the target, may be the limit. ' +
      '"other load" is CPU used by processes outside the benchmark during a phase (% of one core); phases above the limit were re-run and the cleanest kept. ' +
      'Every target fronts the same upstream; direct/stdio is the SDK (or raw) client talking to the upstream with no gateway. ' +
      'The modern targets send 2026-07-28 stateless requests (era headers and _meta on every POST, no initialize, no session): a "session" there is an independent client whose setup is one server/discover.',
    '',
  );
  for (const [upstream, figs] of results) {
    out.push(`## Upstream: ${upstream === 'echo' ? 'minimal echo server (test/bench/echo-server.mjs)' : 'server-everything'}`, '');
    const g = goals.filter((x) => x.upstream === upstream && x.kind !== 'era');
    const era = goals.filter((x) => x.upstream === upstream && x.kind === 'era');
    if (g.length) {
      out.push(
        '### Goals',
        '',
        'floor: the thin proxy (test/bench/thin-proxy.mjs, HTTP to stdio and nothing else) measured the same way, with its ratio to the best peer: what any Node.js gateway can reach here.',
        '',
        '| goal | Switchboard target | measured | best peer | floor (thin proxy) | ratio | needed | result |',
        '|---|---|---|---|---|---:|---|---|',
      );
      for (const x of g) out.push(`| ${x.goal} | ${x.target} | ${x.measured} | ${x.bestPeer} | ${x.floor ?? '–'} | ${f2(x.ratio)} | ${x.threshold} | ${x.pass ? 'PASS' : '**MISS**'} |`);
      out.push('');
    }
    if (era.length) {
      out.push('### Modern (2026-07-28) clients vs the JSON session variant', '', '| goal | modern target | measured | JSON session variant | ratio | needed | result |', '|---|---|---|---|---:|---|---|');
      for (const x of era) out.push(`| ${x.goal} | ${x.target} | ${x.measured} | ${x.bestPeer} | ${f2(x.ratio)} | ${x.threshold} | ${x.pass ? 'PASS' : '**MISS**'} |`);
      out.push('');
    }
    out.push('### Latency', '', ...latencyTable(figs), '');
    out.push('### Throughput, raw client (calls/s)', '', ...throughputTable(figs, 'raw', shape.inflight, shape.many), '');
    out.push('### Throughput, SDK client (calls/s)', '', ...throughputTable(figs, 'sdk', shape.inflight, shape.many), '');
    out.push('### Memory, processes, isolation', '', ...resourceTable(figs, shape.openSessions[upstream]), '');
    const problems = figs.flatMap((f) => [...f.problems, ...f.throughput.filter((t) => t.firstError).map((t) => `${t.loader} ${t.sessions}s×${t.inflight}: ${t.errors} errors, first: ${t.firstError}`)].map((p) => `- ${f.target}: ${p}`));
    if (problems.length) out.push('### Problems', '', ...problems, '');
  }
  for (const p of profiles) {
    out.push(`## CPU profile: ${p.target} (${p.upstream})`, '', p.load, '');
    out.push(`${p.summary.file} · ${f1(p.summary.totalMs)} ms sampled (${p.window ? 'the measured load only' : 'whole process life, start-up included'}), ${f1(p.summary.busyPct)} % busy`, '');
    out.push('| self % of busy | self ms | function | where | main callers (ms) |', '|---:|---:|---|---|---|');
    for (const e of p.summary.top) {
      const callers = e.callers.map((c) => `${c.via.replace(/\|/g, '\\|')} (${f1(c.ms)})`).join('<br>');
      out.push(`| ${f1(e.selfPct)} | ${f1(e.selfMs)} | \`${e.fn}\` | ${e.where} | ${callers} |`);
    }
    out.push('', '| area | self % of busy |', '|---|---:|');
    for (const a of p.summary.byArea) out.push(`| ${a.area} | ${f1(a.selfPct)} |`);
    out.push('');
  }
  return out.join('\n');
}
