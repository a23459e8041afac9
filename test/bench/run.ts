/**
 * `npm run bench [-- --quick] [--upstream echo|everything|all] [--only SUBSTR,…] [--profile] [--ref COMMIT | --worktree] [--no-build]`
 *
 * Measures the direct stdio floor, Switchboard in each transport and sharing mode, and the peer
 * gateways, one target at a time on loopback, and writes a markdown table and a JSON file under .bench/.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runLoad } from './load.js';
import { RawHttp, openRaw } from './load-raw.js';
import { MODES, measureEraPaired, measurePaired, measureTarget, type TargetFigures } from './measure.js';
import { ensurePeers } from './peers.js';
import { monotonicUs, summarizeProfile, type ProfileWindow } from './profile.js';
import { evaluateGoals, type Goal } from './goals.js';
import { renderMarkdown, type Profiled, type RunInfo } from './report.js';
import { ROOT, TARGETS, killAllSync, startTarget, type RunningTarget, type StartOptions, type TargetSpec, type UpstreamName } from './targets.js';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    upstream: { type: 'string' },
    only: { type: 'string' },
    profile: { type: 'boolean', default: false },
    'no-build': { type: 'boolean', default: false },
    worktree: { type: 'boolean', default: false },
    ref: { type: 'string', default: 'HEAD' },
  },
});

const mode = MODES[args.quick ? 'quick' : 'full'];
const upstreams: UpstreamName[] = args.upstream === 'echo' || args.upstream === 'everything' ? [args.upstream] : args.upstream === 'all' || !args.quick ? ['echo', 'everything'] : ['echo'];
const only = args.only?.split(',').filter(Boolean);
const benchDir = join(ROOT, '.bench');
const workDir = join(benchDir, 'work');
const log = (s: string): void => void process.stdout.write(`${s}\n`);

// Whatever happens, no server started here may outlive the harness.
process.on('exit', killAllSync);
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    killAllSync();
    process.exit(130);
  });
}

/**
 * Compiles the gateway once into a scratch folder, so tsx is not what gets measured and the shared
 * dist/ is left alone. By default it compiles src/ as committed at HEAD (a git archive), so that work
 * in progress in the tree neither breaks the run nor leaks into figures labelled with a commit;
 * --ref COMMIT compiles another commit (to compare two), --worktree the working tree.
 */
function build(): { main: string; status: string; commit: string } {
  const out = join(benchDir, 'build');
  const main = join(out, 'main.js');
  const stamp = join(out, '.built-from');
  const head = git('rev-parse', `${args.ref}^{commit}`);
  const stamped = existsSync(stamp) ? readFileSync(stamp, 'utf8') : '?';
  if (args['no-build'] && existsSync(main)) return { main, status: 'reused .bench/build', commit: stamped.slice(0, 7) };
  // The same commit compiles to the same JavaScript: reuse it rather than spend the quick budget on tsc.
  if (!args.worktree && existsSync(main) && existsSync(stamp) && stamped === head) return { main, status: `${args.ref} ${head.slice(0, 7)} (compiled earlier)`, commit: head.slice(0, 7) };
  rmSync(out, { recursive: true, force: true });
  let project = join(ROOT, 'tsconfig.build.json');
  let what = 'working tree';
  if (!args.worktree) {
    const snap = join(benchDir, 'snapshot');
    rmSync(snap, { recursive: true, force: true });
    mkdirSync(snap, { recursive: true });
    const tar = execFileSync('git', ['archive', '--format=tar', head, 'src', 'tsconfig.json', 'tsconfig.build.json', 'package.json'], { cwd: ROOT, maxBuffer: 256 * 1024 * 1024 });
    execFileSync('tar', ['-x', '-C', snap], { input: tar });
    project = join(snap, 'tsconfig.build.json');
    what = `${args.ref} ${head.slice(0, 7)}`;
  }
  // --noCheck: emit only; type errors are the type-check's business, and checking costs seconds of the quick budget.
  const r = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project, '--outDir', out, '--noCheck'], { cwd: ROOT, encoding: 'utf8' });
  if (!existsSync(main)) throw new Error(`build failed:\n${r.stdout}${r.stderr}`);
  if (r.status !== 0) log(`warning: tsc reported errors but emitted JavaScript:\n${r.stdout.slice(0, 2000)}`);
  if (!args.worktree && r.status === 0) writeFileSync(stamp, head);
  const commit = args.worktree ? `${head.slice(0, 7)} + working tree` : head.slice(0, 7);
  return { main, status: `${what}${r.status === 0 ? ', tsc --noCheck' : ', tsc reported errors (emitted anyway)'}`, commit };
}

function git(...a: string[]): string {
  try {
    return execFileSync('git', a, { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    return '?';
  }
}

function version(pkg: string): string {
  return (JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;
}

function selected(spec: TargetSpec): boolean {
  return !only || only.some((o) => spec.id.includes(o)) || spec.family === 'direct' || spec.family === 'floor' || spec.family === 'stack';
}

/**
 * Starts a gateway under --cpu-prof, runs one workload, stops it (SIGTERM: a graceful exit is what
 * makes node write the profile) and summarizes the profile. 'load' is 64 raw calls in flight on one
 * session; 'setup' is paced session setups, for the per-session setup goal.
 */
async function profileTarget(spec: TargetSpec, upstream: UpstreamName, workload: 'load' | 'setup', o: StartOptions): Promise<Profiled | undefined> {
  const dir = join(benchDir, 'prof', `${upstream}-${spec.id.replace(/\//g, '_')}-${workload}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const t = await startTarget(spec, { ...o, nodeFlags: ['--cpu-prof', '--cpu-prof-dir', dir] });
  const seconds = mode.name === 'quick' ? 3 : 8;
  let load = '';
  let window: ProfileWindow | undefined;
  try {
    const http = new RawHttp(t.origin!);
    const open = () => openRaw(http, t.access as Exclude<typeof t.access, { kind: 'stdio' }>);
    if (workload === 'load') {
      const s = await open();
      await runLoad([s], 64, mode.targetWarmup);
      const fromUs = monotonicUs();
      const r = await runLoad([s], 64, { maxCalls: 10_000_000, maxMs: seconds * 1000 });
      window = { fromUs, toUs: monotonicUs() };
      await s.close();
      load = `raw client, 1 session, 64 in flight, ${seconds} s: ${Math.round(r.callsPerSec)} calls/s under the profiler`;
    } else {
      const times: number[] = [];
      for (let i = 0; i < 40; i++) {
        await new Promise((r) => setTimeout(r, mode.setupPaceMs[upstream]));
        const t0 = performance.now();
        const s = await open();
        times.push(performance.now() - t0);
        await s.close();
      }
      times.sort((a, b) => a - b);
      load = `40 raw session setups ${mode.setupPaceMs[upstream]} ms apart: p50 ${times[20]!.toFixed(2)} ms under the profiler`;
    }
    await http.close();
    log(`  ${load}`);
  } finally {
    await t.stop();
  }
  const file = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(dir, f)).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  if (!file) {
    log(`  no profile written for ${spec.id}`);
    return undefined;
  }
  return { target: spec.id, upstream, load, window: window !== undefined, summary: summarizeProfile(file, 15, window) };
}

async function main(): Promise<void> {
  const started = Date.now();
  const loadAtStart = loadavg()[0]!;
  mkdirSync(workDir, { recursive: true });
  log(`switchboard bench: ${mode.name} mode, upstreams ${upstreams.join(', ')}`);
  const tb = performance.now();
  const built = build();
  log(`built: ${built.status} (${((performance.now() - tb) / 1000).toFixed(1)} s)`);
  const peers = ensurePeers(join(benchDir, 'peers'), log);
  const opts: StartOptions = { upstream: 'echo', switchboardMain: built.main, peers, workDir };
  const results = new Map<UpstreamName, TargetFigures[]>();
  const goals: Goal[] = [];
  for (const upstream of upstreams) {
    const figs: TargetFigures[] = [];
    results.set(upstream, figs);
    // The thin proxy and the direct access stay up for the whole upstream's run: every Switchboard target
    // is then measured side by side with them (paired-floor.ts) as well as on its own.
    let floor: RunningTarget | undefined;
    let direct: RunningTarget | undefined;
    // The JSON session variants, by sharing mode, kept up until the 2026-07-28 target of the same mode
    // has been measured side by side with them (measureEraPaired).
    const eraRefs = new Map<string, RunningTarget>();
    const wantsEraRef = (spec: TargetSpec) =>
      spec.family === 'switchboard' && spec.transport === 'streamable-json' && TARGETS.some((m) => selected(m) && m.family === 'switchboard' && m.transport === 'modern-json' && m.sharing === spec.sharing);
    for (const spec of TARGETS.filter(selected)) {
      log(`[${upstream}] ${spec.id}`);
      // The JSON variant kept for this 2026-07-28 target: paired with it below, stopped either way.
      const eraRef = spec.family === 'switchboard' && spec.transport === 'modern-json' ? eraRefs.get(spec.sharing) : undefined;
      if (eraRef) eraRefs.delete(spec.sharing);
      let target;
      const t0 = performance.now();
      try {
        target = await startTarget(spec, { ...opts, upstream });
        log(`  started (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
      } catch (err) {
        log(`  ! could not start: ${(err as Error).message}`);
        figs.push({ target: spec.id, family: spec.family, transport: spec.transport, sharing: spec.sharing, upstream, throughput: [], problems: [`start: ${(err as Error).message}`] });
        await eraRef?.stop();
        continue;
      }
      let keep = false;
      try {
        const f = await measureTarget(target, upstream, mode, log);
        figs.push(f);
        if (spec.family === 'switchboard' && floor) await measurePaired(f, floor, direct, target, mode, log);
        if (eraRef) await measureEraPaired(f, eraRef, target, mode, log);
        if (wantsEraRef(spec) && f.problems.length === 0) {
          eraRefs.set(spec.sharing, target);
          keep = true;
        }
        // Kept only when its own figures are usable as a reference.
        if (spec.family === 'floor' && f.problems.length === 0) {
          floor = target;
          keep = true;
        }
        if (spec.family === 'direct') {
          direct = target;
          keep = true;
        }
      } finally {
        await eraRef?.stop();
        if (!keep) {
          const t1 = performance.now();
          await target.stop();
          log(`  stopped (${((performance.now() - t1) / 1000).toFixed(1)} s)`);
        }
      }
    }
    await floor?.stop();
    await direct?.stop();
    for (const t of eraRefs.values()) await t.stop();
    goals.push(...evaluateGoals(upstream, figs));
  }
  const measuredSeconds = (Date.now() - started) / 1000;
  const profiles: Profiled[] = [];
  if (args.profile) {
    for (const upstream of upstreams) {
      // Shared variants under call load; the JSON per-session variant under session setups.
      const jobs = TARGETS.filter((s) => s.family === 'switchboard' && selected(s)).flatMap((s): Array<[TargetSpec, 'load' | 'setup']> =>
        s.sharing === 'shared' ? [[s, 'load']] : s.transport === 'streamable-json' ? [[s, 'setup']] : [],
      );
      for (const [spec, workload] of jobs) {
        log(`[profile ${upstream}] ${spec.id} ${workload}`);
        const p = await profileTarget(spec, upstream, workload, { ...opts, upstream }).catch((err: Error) => log(`  ! ${err.message}`));
        if (p) profiles.push(p);
      }
    }
  }
  const info: RunInfo = {
    mode: mode.name,
    startedAt: new Date(started).toISOString(),
    seconds: (Date.now() - started) / 1000,
    measuredSeconds,
    node: process.version,
    cpus: `${cpus().length} × ${cpus()[0]?.model ?? '?'}`,
    // The commit that was compiled and measured, not whatever HEAD is by the end of the run.
    commit: built.commit,
    dirty: args.worktree === true && git('status', '--porcelain', '--', 'src') !== '',
    peers: peers.versions,
    sdk: version('@modelcontextprotocol/sdk'),
    sdkModern: version('@modelcontextprotocol/client'),
    build: built.status,
    loadavg: [loadAtStart, loadavg()[0]!],
    repeats: { agreePct: mode.agreePct, maxAttempts: mode.maxAttempts, budgetS: mode.retryBudgetMs / 1000 },
  };
  const stamp = info.startedAt.replace(/[:.]/g, '-');
  const base = join(benchDir, `bench-${mode.name}-${stamp}`);
  const md = renderMarkdown(info, results, goals, profiles, { inflight: mode.inflight, many: mode.manySessions, openSessions: mode.openSessions });
  writeFileSync(`${base}.md`, md);
  writeFileSync(`${base}.json`, JSON.stringify({ info, mode, results: Object.fromEntries(results), goals, profiles }, null, 2));
  log('');
  log(md);
  log('');
  log(`markdown: ${base}.md`);
  log(`json:     ${base}.json`);
  log(`done in ${info.seconds.toFixed(0)} s`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
