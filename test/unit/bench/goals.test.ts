import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { evaluateGoals, LOADER_BOUND_PCT, loaderBound, type Goal } from '../../bench/goals.js';
import type { TargetFigures, ThroughputFigure } from '../../bench/measure.js';
import type { PairedLoad } from '../../bench/paired-floor.js';
import { goalRow, GOALS_HEADER, renderMarkdown, resultCell, runsCell, stackLine, type RunInfo } from '../../bench/report.js';

/** One agreed raw phase at 64 in flight, quiet machine, loader well below its limit, unless told otherwise. */
function phase(sessions: number, callsPerSec: number, cpu: number | undefined, extra: Partial<ThroughputFigure> = {}): ThroughputFigure {
  return {
    loader: 'raw',
    sessions,
    inflight: 64,
    calls: 10_000,
    errors: 0,
    mismatches: 0,
    callsPerSec,
    p50Ms: 5,
    p99Ms: 9,
    ...(cpu === undefined ? {} : { gatewayCpuMsPerCall: cpu, gatewayCpuPct: 80 }),
    loaderCpuPct: 50,
    loaderMainPct: 40,
    foreignPct: 3,
    attempts: 2,
    agreed: true,
    spreadPct: 4,
    ...extra,
  };
}

function target(id: string, family: string, transport: string, sharing: string, o: { cpu?: number; rate1?: number; rate50?: number; seq?: number; one?: Partial<ThroughputFigure> }): TargetFigures {
  const throughput: ThroughputFigure[] = [];
  if (o.rate1 !== undefined) throughput.push(phase(1, o.rate1, o.cpu, o.one));
  if (o.rate50 !== undefined) throughput.push(phase(50, o.rate50, o.cpu));
  return {
    target: id,
    family,
    transport,
    sharing,
    upstream: 'echo',
    throughput,
    ...(o.seq === undefined ? {} : { sequential: { n: 100, p50Ms: o.seq, p99Ms: o.seq * 2, foreignPct: 2, loaderMainPct: 20, attempts: 2, agreed: true, spreadPct: 1 } }),
    problems: [],
  };
}

const direct = target('direct/stdio', 'direct', 'stdio', 'per-session', { seq: 0.1 });
const thin = target('floor/thin-proxy', 'floor', 'streamable-json', 'shared', { cpu: 0.1, rate1: 10_000, rate50: 8000, seq: 1.1 });
const peers = [
  target('supergateway/legacy', 'supergateway', 'legacy-sse', 'shared', { cpu: 0.2, rate1: 6000, rate50: 2000, seq: 1.0 }),
  target('mcp-proxy/legacy', 'mcp-proxy', 'legacy-sse', 'shared', { cpu: 0.4, rate1: 3000, rate50: 4000, seq: 2.0 }),
];

function find(goals: Goal[], goal: string, t: string): Goal {
  const g = goals.find((x) => x.goal.startsWith(goal) && x.target === t);
  assert.ok(g, `no goal "${goal}" for ${t}`);
  return g;
}

describe('bench goals: ratios to the thin proxy and the best peer', () => {
  const figs = [
    direct,
    thin,
    target('switchboard/json/shared', 'switchboard', 'streamable-json', 'shared', { cpu: 0.11, rate1: 10_500, rate50: 7900, seq: 1.3 }),
    target('switchboard/auto/shared', 'switchboard', 'streamable-auto', 'shared', { cpu: 0.13, rate1: 9000, rate50: 8000, seq: 1.35 }),
    target('switchboard/sse/shared', 'switchboard', 'streamable-sse', 'shared', { cpu: 0.12, rate1: 7000, rate50: 8100, seq: 1.2 }),
    target('switchboard/legacy/shared', 'switchboard', 'legacy-sse', 'shared', { cpu: 0.1, rate1: 9500, rate50: 6000, seq: 1.25 }),
    target('switchboard/json/per-session', 'switchboard', 'streamable-json', 'per-session', { cpu: 0.14, rate1: 5000, rate50: 2000, seq: 1.2 }),
    ...peers,
  ];
  const goals = evaluateGoals('echo', figs);

  it('judges gateway CPU per call against the thin proxy: 1.2× for shared variants, 1.5× per session', () => {
    const json = find(goals, 'gateway CPU per call', 'switchboard/json/shared');
    assert.ok(Math.abs(json.vsThin! - 1.1) < 1e-9);
    assert.equal(json.ratio, json.vsThin);
    assert.equal(json.threshold, '≤ 1.2');
    assert.equal(json.pass, true);
    assert.equal(json.thin, '0.100 ms');
    // The best peer by CPU is the lowest: supergateway's 0.2 ms.
    assert.equal(json.bestPeer, 'supergateway/legacy 0.200 ms');
    assert.ok(Math.abs(json.vsPeer! - 0.55) < 1e-9);
    assert.equal(find(goals, 'gateway CPU per call', 'switchboard/auto/shared').pass, false, '1.3× misses');
    assert.equal(find(goals, 'gateway CPU per call', 'switchboard/sse/shared').pass, true, '1.2× is within');
    const perSession = find(goals, 'gateway CPU per call', 'switchboard/json/per-session');
    assert.equal(perSession.threshold, '≤ 1.5');
    assert.equal(perSession.pass, true, '1.4× is within the per-session allowance');
  });

  it('judges throughput at 64 in flight for shared variants only, 1 and 50 sessions, against the thin proxy', () => {
    const one = find(goals, 'throughput at 64 in flight (raw, 1 session)', 'switchboard/json/shared');
    assert.ok(Math.abs(one.vsThin! - 1.05) < 1e-9);
    assert.equal(one.pass, true);
    // The best peer by rate is the highest: supergateway at 1 session, mcp-proxy at 50.
    assert.ok(Math.abs(one.vsPeer! - 10_500 / 6000) < 1e-9);
    const fifty = find(goals, 'throughput at 64 in flight (raw, 50 sessions)', 'switchboard/json/shared');
    assert.equal(fifty.bestPeer, 'mcp-proxy/legacy 4,000/s');
    assert.equal(fifty.pass, false, '7,900 < 8,000');
    assert.equal(find(goals, 'throughput at 64 in flight (raw, 1 session)', 'switchboard/auto/shared').pass, false);
    assert.equal(find(goals, 'throughput at 64 in flight (raw, 50 sessions)', 'switchboard/auto/shared').pass, true, 'equal to the thin proxy passes');
    assert.equal(goals.filter((g) => g.goal.startsWith('throughput') && g.target.includes('per-session')).length, 0);
  });

  it('judges added sequential latency (over direct) against the thin proxy’s, at 1.2×', () => {
    const json = find(goals, 'added sequential p50', 'switchboard/json/shared');
    assert.equal(json.thin, '+1.000 ms');
    assert.ok(Math.abs(json.vsThin! - 1.2) < 1e-9);
    assert.equal(json.pass, true);
    assert.equal(find(goals, 'added sequential p50', 'switchboard/auto/shared').pass, false, '+1.25 ms is 1.25×');
    assert.equal(find(goals, 'added sequential p50', 'switchboard/json/shared').bestPeer, 'supergateway/legacy +0.900 ms');
  });

  it('renders each goal as one row of the table, with both ratios and the phases’ conditions', () => {
    const cols = GOALS_HEADER[0]!.split('|').length;
    for (const g of goals) assert.equal(goalRow(g).split('|').length, cols, goalRow(g));
    const row = goalRow(find(goals, 'gateway CPU per call', 'switchboard/json/shared'));
    assert.match(row, /\| 0\.110 ms \| 0\.100 ms \| 1\.10 \| – \| supergateway\/legacy 0\.200 ms \| 0\.55 \| ≤ 1\.2 \| PASS \| 3 · 3 \| 40 · 40 \| 2 \(4\.0 %\) · 2 \(4\.0 %\) \|$/);
  });
});

/** A side-by-side figure (paired-floor.ts) for a target, at `sessions` × 64. */
function pairedLoadFig(sessions: number, cpuRatio: number, throughputRatio: number, errors = 0): PairedLoad {
  const side = { calls: 5000, cpuMs: 300, ms: 1000 };
  return { sessions, inflight: 64, rounds: 8, target: side, floor: side, cpuRatio, throughputRatio, cpuRange: [cpuRatio - 0.05, cpuRatio + 0.05], throughputRange: [throughputRatio - 0.1, throughputRatio + 0.1], errors, foreignPct: 0 };
}

describe('bench goals: the side-by-side ratio with the thin proxy is the one judged', () => {
  // Own phases minutes apart say 1.5× (a slow stretch of the machine); side by side it is 1.05×.
  const slow = target('switchboard/json/shared', 'switchboard', 'streamable-json', 'shared', { cpu: 0.15, rate1: 6000, rate50: 5000, seq: 1.7 });
  slow.paired = {
    load: [pairedLoadFig(1, 1.05, 1.02), pairedLoadFig(50, 1.1, 0.97)],
    sequential: { rounds: 8, calls: { direct: 2000, floor: 2000, target: 2000 }, p50Ms: { direct: 0.1, floor: 0.5, target: 0.56 }, addedRatio: 1.15, errors: 0, foreignPct: 0 },
  };
  const goals = evaluateGoals('echo', [direct, thin, slow]);

  it('passes or misses on the paired ratio, and keeps the own-phase ratio beside it', () => {
    const cpu = find(goals, 'gateway CPU per call', 'switchboard/json/shared');
    assert.ok(Math.abs(cpu.vsThin! - 1.5) < 1e-9);
    assert.equal(cpu.ratio, 1.05);
    assert.equal(cpu.pass, true);
    assert.match(goalRow(cpu), /\| 1\.50 \| \*\*1\.05\*\* \(1\.00–1\.10\) \|/);
    assert.equal(find(goals, 'throughput at 64 in flight (raw, 1 session)', 'switchboard/json/shared').pass, true);
    const fifty = find(goals, 'throughput at 64 in flight (raw, 50 sessions)', 'switchboard/json/shared');
    assert.equal(fifty.ratio, 0.97);
    assert.equal(fifty.pass, false, 'a paired 0.97 misses even where the own phases are what they are');
    const seq = find(goals, 'added sequential p50', 'switchboard/json/shared');
    assert.equal(seq.ratio, 1.15);
    assert.equal(seq.pass, true);
    assert.match(goalRow(seq), /\| \*\*1\.15\*\* \|/);
  });

  it('misses on a paired ratio above the limit even when the own phases looked fine', () => {
    const lucky = target('switchboard/sse/shared', 'switchboard', 'streamable-sse', 'shared', { cpu: 0.1, rate1: 10_000 });
    lucky.paired = { load: [pairedLoadFig(1, 1.3, 1)] };
    const g = find(evaluateGoals('echo', [thin, lucky]), 'gateway CPU per call', 'switchboard/sse/shared');
    assert.ok(Math.abs(g.vsThin! - 1) < 1e-9);
    assert.equal(g.pass, false);
  });

  it('ignores a paired figure whose calls failed, and judges the own phases then', () => {
    const t = target('switchboard/sse/shared', 'switchboard', 'streamable-sse', 'shared', { cpu: 0.11, rate1: 10_000 });
    t.paired = { load: [pairedLoadFig(1, 2, 1, 3)] };
    const g = find(evaluateGoals('echo', [thin, t]), 'gateway CPU per call', 'switchboard/sse/shared');
    assert.equal(g.paired, undefined);
    assert.ok(Math.abs(g.ratio - 1.1) < 1e-9);
    assert.equal(g.pass, true);
  });

  it('compares a modern target with the JSON session variant through their two paired ratios', () => {
    const modern = target('switchboard/modern/shared', 'switchboard', 'modern-json', 'shared', { cpu: 0.2, rate1: 5000, rate50: 4000 });
    modern.paired = { load: [pairedLoadFig(1, 1.05 * 1.02, 1.02 * 0.99), pairedLoadFig(50, 1.1, 0.97 * 1.01)] };
    const era = evaluateGoals('echo', [direct, thin, slow, modern]).filter((g) => g.kind === 'era');
    const cpu = era.find((g) => g.goal.includes('CPU'))!;
    assert.ok(Math.abs(cpu.vsPeer! - 0.2 / 0.15) < 1e-9, 'own phases: 1.33');
    assert.ok(Math.abs(cpu.ratio - 1.02) < 1e-9);
    assert.equal(cpu.pass, false, '2 % more CPU is worse');
    const [one, fifty] = era.filter((g) => g.goal.includes('throughput'));
    assert.ok(Math.abs(one!.ratio - 0.99) < 1e-9);
    assert.equal(one!.pass, false);
    assert.ok(Math.abs(fifty!.ratio - 1.01) < 1e-9);
    assert.equal(fifty!.pass, true);
  });

  it('judges a modern target on its own pairing with the JSON session variant where it has one', () => {
    const modern = target('switchboard/modern/shared', 'switchboard', 'modern-json', 'shared', { cpu: 0.2, rate1: 5000, rate50: 4000 });
    // Through the thin proxy it would be 1.02 CPU and 0.99 throughput (as above); side by side with JSON less and more.
    modern.paired = { load: [pairedLoadFig(1, 1.05 * 1.02, 1.02 * 0.99), pairedLoadFig(50, 1.1, 0.97 * 1.01)] };
    modern.eraPaired = [pairedLoadFig(1, 0.97, 1.04), pairedLoadFig(50, 0.98, 0.96, 2)];
    const era = evaluateGoals('echo', [direct, thin, slow, modern]).filter((g) => g.kind === 'era');
    const cpu = era.find((g) => g.goal.includes('CPU'))!;
    assert.equal(cpu.ratio, 0.97);
    assert.deepEqual(cpu.paired, { ratio: 0.97, range: [0.97 - 0.05, 0.97 + 0.05] });
    assert.equal(cpu.pass, true);
    const [one, fifty] = era.filter((g) => g.goal.includes('throughput'));
    assert.equal(one!.ratio, 1.04);
    assert.equal(one!.pass, true);
    // The 50-client pairing had failed calls: the quotient through the thin proxy stands in for it.
    assert.ok(Math.abs(fifty!.ratio - 1.01) < 1e-9);
    assert.equal(fifty!.paired!.range, undefined);
  });
});

describe('bench goals: what makes a figure doubtful', () => {
  it('flags a goal loader-bound when the target’s or the thin proxy’s load loop was at its limit', () => {
    assert.equal(loaderBound({ loaderMainPct: LOADER_BOUND_PCT, loaderCpuPct: 150 }), true);
    // The main thread is what limits the loop; other threads of the process do not.
    assert.equal(loaderBound({ loaderMainPct: 60, loaderCpuPct: 130 }), false);
    assert.equal(loaderBound({ loaderCpuPct: 95 }), true, 'without a thread figure, the process figure');
    assert.equal(loaderBound(undefined), false);
    const boundThin = target('floor/thin-proxy', 'floor', 'streamable-json', 'shared', { cpu: 0.1, rate1: 10_000, one: { loaderMainPct: 97 } });
    const swb = target('switchboard/json/shared', 'switchboard', 'streamable-json', 'shared', { cpu: 0.1, rate1: 10_000 });
    const g = find(evaluateGoals('echo', [boundThin, swb]), 'throughput at 64 in flight (raw, 1 session)', 'switchboard/json/shared');
    assert.equal(g.loaderBound, true);
    assert.equal(g.pass, true);
    assert.equal(resultCell(g), 'PASS (loader-bound)');
    assert.match(goalRow(g), /\| 40 · 97 ⚠ \|/);
  });

  it('says when a phase’s runs did not agree', () => {
    const swb = target('switchboard/sse/shared', 'switchboard', 'streamable-sse', 'shared', { cpu: 0.15, rate1: 5000, one: { attempts: 4, agreed: false, spreadPct: 14.2 } });
    const g = find(evaluateGoals('echo', [thin, swb]), 'gateway CPU per call', 'switchboard/sse/shared');
    assert.equal(g.pass, false);
    assert.equal(resultCell(g), '**MISS** (runs disagree)');
    assert.equal(runsCell(g.phases!.target), '4 **≠** (14.2 %)');
    assert.equal(runsCell(g.phases!.ref), '2 (4.0 %)');
  });

  it('notes on every latency goal when the direct floor subtracted from both sides did not agree', () => {
    const shaky = { ...direct, sequential: { ...direct.sequential!, attempts: 3, agreed: false, spreadPct: 12.1 } };
    const swb = target('switchboard/json/shared', 'switchboard', 'streamable-json', 'shared', { seq: 1.2 });
    const g = find(evaluateGoals('echo', [shaky, thin, swb]), 'added sequential p50', 'switchboard/json/shared');
    assert.equal(resultCell(g), "PASS (direct/stdio's runs disagree (12.1 %))");
  });

  it('reads spreads that JSON turned into null as no comparable pair', () => {
    assert.equal(runsCell({ foreignPct: 0, loaderBound: false, attempts: 3, agreed: false, spreadPct: NaN }), '3 **≠** (no comparable pair)');
    assert.equal(runsCell({ foreignPct: 0, loaderBound: false, attempts: 1, agreed: false, spreadPct: NaN }), '1 **≠** (one run)');
  });

  it('does not judge against a thin proxy whose phase had errors, and says why', () => {
    const broken = target('floor/thin-proxy', 'floor', 'streamable-json', 'shared', { cpu: 0.1, rate1: 10_000, one: { errors: 3 } });
    const swb = target('switchboard/json/shared', 'switchboard', 'streamable-json', 'shared', { cpu: 0.1, rate1: 10_000 });
    const g = find(evaluateGoals('echo', [broken, ...peers, swb]), 'gateway CPU per call', 'switchboard/json/shared');
    assert.ok(Number.isNaN(g.vsThin!));
    assert.equal(g.pass, false);
    assert.match(resultCell(g), /no usable thin-proxy figure/);
    assert.ok(Math.abs(g.vsPeer! - 0.5) < 1e-9, 'the peer ratio is still given');
  });

  it('leaves a peer whose phase had wrong answers out of "best peer"', () => {
    const crossing = target('supergateway/legacy', 'supergateway', 'legacy-sse', 'shared', { cpu: 0.05, rate1: 50_000, one: { mismatches: 10 } });
    const swb = target('switchboard/json/shared', 'switchboard', 'streamable-json', 'shared', { cpu: 0.1, rate1: 10_000 });
    const g = find(evaluateGoals('echo', [thin, crossing, peers[1]!, swb]), 'gateway CPU per call', 'switchboard/json/shared');
    assert.equal(g.bestPeer, 'mcp-proxy/legacy 0.400 ms');
  });
});

describe('bench report page', () => {
  it('puts the goals table, with its legend, on the page', () => {
    const figs = [direct, thin, target('switchboard/auto/shared', 'switchboard', 'streamable-auto', 'shared', { cpu: 0.11, rate1: 10_500, rate50: 7900, seq: 1.3 }), ...peers];
    const info: RunInfo = { mode: 'quick', startedAt: '2026-01-01T00:00:00.000Z', seconds: 100, measuredSeconds: 100, node: 'v20', cpus: '2 × test', commit: 'abc1234', dirty: false, peers: {}, sdk: '1', build: 'test', loadavg: [1, 2], repeats: { agreePct: 10, maxAttempts: 3, budgetS: 30 } };
    const md = renderMarkdown(info, new Map([['echo', figs]]), evaluateGoals('echo', figs), [], { inflight: [1, 64], many: 50, openSessions: { echo: 50, everything: 50 } });
    assert.ok(md.includes(GOALS_HEADER[0]!));
    assert.match(md, /until two runs agree within 10 %/);
    assert.match(md, /\| gateway CPU per call \(raw, 1 session × 64 in flight\) \| switchboard\/auto\/shared \|/);
    assert.match(md, /\| throughput at 64 in flight \(raw, 50 sessions\) \| switchboard\/auto\/shared \| 7,900\/s \| 8,000\/s \| 0\.99 \|/);
  });

  it('says what the libraries alone cost against the thin proxy, and is not a goal (floor/stack)', () => {
    const stack = target('floor/stack', 'stack', 'streamable-json', 'shared', { cpu: 0.111, rate1: 9_500 });
    const sb = target('switchboard/json/shared', 'switchboard', 'streamable-json', 'shared', { cpu: 0.15, rate1: 9_000, rate50: 8_000, seq: 1.2 });
    assert.match(stackLine([direct, thin, stack, sb]) ?? '', /CPU per call 0\.111 ms, 1\.11× the thin proxy's; throughput at 1 session × 64 0\.95×/);
    // Without its figures (it failed, or ran with errors) nothing is claimed.
    assert.equal(stackLine([direct, thin, sb]), undefined);
    const broken = target('floor/stack', 'stack', 'streamable-json', 'shared', { cpu: 0.111, rate1: 9_500, one: { errors: 2 } });
    assert.equal(stackLine([direct, thin, broken, sb]), undefined);
    // It is never judged as a Switchboard variant nor taken as the best peer.
    const goals = evaluateGoals('echo', [direct, thin, stack, sb, ...peers]);
    assert.ok(goals.every((g) => g.target !== 'floor/stack' && !g.bestPeer.startsWith('floor/stack')));
  });
});
