import { LOADER_BOUND_PCT, clean, loaderBound, phaseNote, tput, type Goal, type PhaseNote } from './goals.js';
import type { Loader, TargetFigures } from './measure.js';
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
  /** How phases were repeated: until two runs agree within agreePct, at most maxAttempts runs. */
  repeats?: { agreePct: number; maxAttempts: number; budgetS: number };
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
const f0 = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '–' : x.toFixed(0));

/** "2 (3.1 %)": how many times the phase ran and how far apart its two closest runs were; ≠ when no two agreed. */
export function runsCell(p: PhaseNote | undefined): string {
  if (!p) return '–';
  const spread = p.attempts < 2 ? 'one run' : !Number.isFinite(p.spreadPct) ? 'no comparable pair' : `${f1(p.spreadPct)} %`;
  return `${p.attempts}${p.agreed ? '' : ' **≠**'} (${spread})`;
}

const loaderCell = (p: PhaseNote | undefined) => (p ? `${f0(p.loaderPct)}${p.loaderBound ? ' ⚠' : ''}` : '–');
const pair = (g: Goal, cell: (p: PhaseNote | undefined) => string) => (g.phases ? `${cell(g.phases.target)} · ${cell(g.phases.ref)}` : '–');

/** PASS or MISS, and what makes the figure doubtful: a load loop at its limit, runs that did not agree. */
export function resultCell(g: Goal): string {
  const doubts: string[] = [];
  if (g.loaderBound) doubts.push('loader-bound');
  if (g.phases && [g.phases.target, g.phases.ref].some((p) => p && !p.agreed)) doubts.push('runs disagree');
  if (g.note) doubts.push(g.note);
  return `${g.pass ? 'PASS' : '**MISS**'}${doubts.length ? ` (${doubts.join('; ')})` : ''}`;
}

/** One row of the goals table: the thin-proxy ratio is judged; other goals show their ratio in "needed". */
export function goalRow(g: Goal): string {
  const thinGoal = g.vsThin !== undefined;
  const needed = thinGoal ? g.threshold : `${g.threshold}: ${f2(g.ratio)}`;
  return `| ${g.goal} | ${g.target} | ${g.measured} | ${g.thin ?? '–'} | ${thinGoal ? f2(g.vsThin) : '–'} | ${pairedCell(g)} | ${g.bestPeer} | ${f2(g.vsPeer)} | ${needed} | ${resultCell(g)} | ${pair(g, (p) => f0(p?.foreignPct))} | ${pair(g, loaderCell)} | ${pair(g, runsCell)} |`;
}

/** "**1.03** (0.97–1.08)": the side-by-side ratio (the one judged) and its rounds' spread. */
export function pairedCell(g: Goal): string {
  if (!g.paired) return '–';
  const r = g.paired.range;
  return `**${f2(g.paired.ratio)}**${r ? ` (${f2(r[0])}–${f2(r[1])})` : ''}`;
}

export const GOALS_HEADER = [
  '| goal | Switchboard target | measured | thin proxy | × thin proxy (own phases) | × thin proxy, side by side (rounds) | best peer | × best peer | needed | result | other load % (target · thin) | loader % (target · thin) | runs (target · thin) |',
  '|---|---|---|---|---:|---:|---|---:|---|---|---|---|---|',
];

function latencyTable(figs: TargetFigures[]): string[] {
  const rows = ['| target | setup p50 / p99 ms (SDK) | setup p50 / p99 ms (raw) | sequential tools/call p50 / p99 ms (SDK) | added p50 over direct ms | other load % (sequential) | runs (sequential) |', '|---|---|---|---|---|---:|---|'];
  const floor = figs.find((f) => f.family === 'direct')?.sequential?.p50Ms;
  for (const f of figs) {
    const d = (x: { p50Ms: number; p99Ms: number } | undefined) => (x ? `${f2(x.p50Ms)} / ${f2(x.p99Ms)}` : '–');
    const added = f.sequential && floor !== undefined && f.family !== 'direct' ? f3(f.sequential.p50Ms - floor) : '–';
    rows.push(`| ${f.target} | ${d(f.setupSdk)} | ${d(f.setupRaw)} | ${d(f.sequential)} | ${added} | ${f0(f.sequential?.foreignPct)} | ${runsCell(phaseNote(f.sequential))} |`);
  }
  return rows;
}

function throughputTable(figs: TargetFigures[], loader: Loader, inflight: number[], many: number): string[] {
  const cols: Array<[number, number]> = [];
  for (const s of [1, many]) for (const c of inflight) cols.push([s, c]);
  const head = cols.map(([s, c]) => `${s}s×${c}`);
  const rows = [
    `| target | ${head.join(' | ')} | gateway CPU ms/call (1s×64) | gateway CPU % (1s×64) | loader % main thread / process (1s×64) | loader-bound phases | other load % (max) | phases whose runs agreed | errors |`,
    `|---|${cols.map(() => '---:').join('|')}|---:|---:|---:|---|---:|---:|---:|`,
  ];
  for (const f of figs) {
    const cells = cols.map(([s, c]) => int(tput(f, loader, s, c)?.callsPerSec));
    const at64 = tput(f, loader, 1, 64);
    const errors = f.throughput.filter((t) => t.loader === loader).reduce((sum, t) => sum + t.errors + t.mismatches, 0);
    const phases = f.throughput.filter((t) => t.loader === loader);
    const foreign = Math.max(0, ...phases.map((t) => t.foreignPct));
    const bound = phases.filter((t) => loaderBound(t)).map((t) => `${t.sessions}s×${t.inflight}`).join(', ') || '–';
    const agreed = `${phases.filter((t) => t.agreed).length}/${phases.length}`;
    rows.push(`| ${f.target} | ${cells.join(' | ')} | ${f3(at64?.gatewayCpuMsPerCall)} | ${f1(at64?.gatewayCpuPct)} | ${f0(at64?.loaderMainPct)} / ${f0(at64?.loaderCpuPct)} | ${bound} | ${f1(foreign)} | ${agreed} | ${errors} |`);
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

/**
 * What the charter's request-path libraries cost by themselves (floor/stack: the thin proxy on Fastify,
 * a pino line and prom-client metrics per call), against the thin proxy of the same run: the part of
 * the gateway's budget spent before any of its own code runs.
 */
export function stackLine(figs: TargetFigures[]): string | undefined {
  const thin = figs.find((f) => f.family === 'floor');
  const stack = figs.find((f) => f.family === 'stack');
  const a = stack && clean(tput(stack, 'raw', 1, 64));
  const b = thin && clean(tput(thin, 'raw', 1, 64));
  const cpuA = a?.gatewayCpuMsPerCall ?? NaN;
  const cpuB = b?.gatewayCpuMsPerCall ?? NaN;
  if (!a || !b || !(cpuB > 0) || !(b.callsPerSec > 0)) return undefined;
  return (
    `The libraries alone (floor/stack: the thin proxy on Fastify, with a pino line and prom-client's counter and histogram per call, nothing else): ` +
    `CPU per call ${f3(cpuA)} ms, ${f2(cpuA / cpuB)}× the thin proxy's; throughput at 1 session × 64 ${f2(a.callsPerSec / b.callsPerSec)}× (raw client, runs ${runsCell(phaseNote(tput(stack!, 'raw', 1, 64)))}).`
  );
}

export function renderMarkdown(info: RunInfo, results: Map<UpstreamName, TargetFigures[]>, goals: Goal[], profiles: Profiled[], shape: { inflight: number[]; many: number; openSessions: Record<UpstreamName, number> }): string {
  const out: string[] = [];
  out.push(`# Switchboard benchmark (${info.mode})`, '');
  out.push(`${info.startedAt}, ${info.measuredSeconds.toFixed(0)} s measuring${info.seconds > info.measuredSeconds + 1 ? ` + ${(info.seconds - info.measuredSeconds).toFixed(0)} s profiling` : ''} · ${info.cpus} · Node ${info.node} · commit ${info.commit}${info.dirty ? ' (+ uncommitted changes in src/)' : ''} · build: ${info.build} · load average ${info.loadavg[0].toFixed(1)} at start, ${info.loadavg[1].toFixed(1)} at end`);
  out.push(`Peers: ${Object.entries(info.peers).map(([k, v]) => `${k} ${v}`).join(', ')} · client: @modelcontextprotocol/sdk ${info.sdk}${info.sdkModern ? ` (modern targets: @modelcontextprotocol/client ${info.sdkModern} pinned to 2026-07-28)` : ''} and a raw undici client · all on loopback, one target at a time.`, '');
  const r = info.repeats;
  out.push(
    'Goals (#20) judge each Switchboard variant by its ratio to the thin proxy (test/bench/thin-proxy.mjs: HTTP to one stdio child and nothing else, the least any Node.js gateway can spend) in the same run; ' +
      'the ratio to the best peer of the same run stands beside it. A phase with errors or wrong answers is not eligible as a reference. ' +
      'The thin proxy (and the upstream\'s direct access) stay up for the whole run, and after its own phases every Switchboard target is measured once more side by side with them: the load alternates between the two in short rounds (test/bench/paired-floor.ts), so that both ratios\' halves come from the same minutes (the machine\'s speed drifts by a third over minutes, for the load loop as much as for the target). ' +
      'Where a goal has that side-by-side ratio, it is the one judged; the ratio of the target\'s own phases to the thin proxy\'s (minutes apart) stands beside it. ' +
      `Every load phase and every sequential phase runs at least twice, and again until two runs agree within ${r ? r.agreePct : '?'} % (calls/s and gateway CPU per call; sequential p50), at most ${r ? r.maxAttempts : '?'} runs and ${r ? r.budgetS : '?'} s of extra runs in all; ` +
      '"runs" gives how many and how far apart the closest two were, **≠** when no two agreed; the figure is the one of that pair that saw less other load. ' +
      `"other load" is CPU used by processes outside the benchmark during the phase (% of one core); "loader" the benchmark's own main thread, which runs the load loop: at ${LOADER_BOUND_PCT} % or more (⚠, loader-bound) the client, not the target, may be what limits the figure. ` +
      'Reading the tables: `1s×64` is 64 calls in flight on one session, `50s×64` is 64 in flight spread over 50 sessions. ' +
      '"raw" is the lean load generator (hand-written JSON-RPC over undici keep-alive), "SDK" the official client. ' +
      'Gateway CPU is the gateway process\'s own utime+stime (children excluded) over a phase. ' +
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
        '"needed" is a multiple of the thin proxy\'s figure: gateway CPU per call ≤ 1.2× for shared variants and ≤ 1.5× for per-session ones; throughput at 64 in flight ≥ 1× for shared variants; added sequential p50 ≤ 1.2×. The other goals give their own ratio there.',
        '',
        ...GOALS_HEADER,
      );
      for (const x of g) out.push(goalRow(x));
      out.push('');
      const stack = stackLine(figs);
      if (stack) out.push(stack, '');
    }
    if (era.length) {
      out.push(
        '### Modern (2026-07-28) clients vs the JSON session variant',
        '',
        '| goal | modern target | measured | JSON session variant | ratio (own phases) | side by side with the JSON variant (rounds) | needed | result | other load % (modern · JSON) | loader % (modern · JSON) | runs (modern · JSON) |',
        '|---|---|---|---|---:|---:|---|---|---|---|---|',
      );
      for (const x of era) out.push(`| ${x.goal} | ${x.target} | ${x.measured} | ${x.bestPeer} | ${f2(x.vsPeer ?? x.ratio)} | ${pairedCell(x)} | ${x.threshold} | ${resultCell(x)} | ${pair(x, (p) => f0(p?.foreignPct))} | ${pair(x, loaderCell)} | ${pair(x, runsCell)} |`);
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
