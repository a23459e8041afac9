/**
 * `npm run bench:paired -- REF[:MODE][+traced|+traced-json|+unsampled|+scanned|+auth|+per-session|+unaudited|+redis][@NAME=value…] … [--chunks 10] [--chunk 2000]`
 *
 * CPU per call of gateway builds compared in one run, paired: every build runs at once (each on its
 * own loopback port, with its own echo upstream), and the load alternates between them in small
 * count-bounded chunks, so that the machine's drift (a shared, noisy host) falls on all of them alike.
 * With taskset the gateways share one core and the loader and upstreams the other, so that the
 * scheduler's placement does not favour one build. MODE: json (Streamable HTTP session, JSON answers;
 * the default), legacy (HTTP+SSE session) or modern (2026-07-28 stateless requests). REF: a commit, or
 * "worktree". Each @NAME=value sets that gateway's environment. +traced: that gateway runs with
 * tracing on (every request sampled, spans exported as
 * OTLP/HTTP protobuf to a sink in this process, which answers 200 and keeps nothing), to measure what
 * tracing costs per call against the same build without it (+traced-json: the same, exported as OTLP/HTTP JSON;
 * +unsampled: tracing on at sampleRatio 0, what propagation costs with no span recorded). +scanned: that gateway's endpoint scans
 * definitions and results for hidden text (guardrails.hiddenText strip, with one pattern), to measure
 * what results scanning costs per call against the same build with it off. +per-session: the upstream
 * is leased to the client's session (sharing: per-session; every other build shares it), to measure
 * what sharing one instance costs per call. +unaudited: audit.enabled false, to measure what the audit
 * line costs per call (a log level no longer drops it). +redis: the gateway keeps its state in a redis-server
 * (store.redis; one server for the run), to measure what the store costs per call. +auth: that gateway
 * authenticates every request (auth.mode jwt, the development EdDSA key) and the client sends one bearer
 * token throughout, as a real client does until its token expires. Two names in place of a REF are no
 * Switchboard build: `thin` is the thin proxy (test/bench/thin-proxy.mjs, the platform floor of the
 * #20 goals) and `stack` the stack floor (test/bench/stack-proxy.mjs, the thin proxy on Fastify, pino and
 * prom-client), both JSON answers only: `-- thin stack HEAD` puts the floors and a build in one
 * alternation. Prints each one's gateway CPU µs per call
 * and its ratio to the first. --prof DIR: V8 CPU profiles of the gateways, for test/bench/profile-diff.ts
 * (sampled every 100 µs, ten times V8's default, so that a run of seconds has samples enough).
 *
 * --instructions: instead of CPU time, instructions counted by valgrind's callgrind (test/bench/
 * callgrind.ts), which the neighbours' load does not move. Each gateway runs under callgrind with V8 in
 * its predictable mode; after the warm-up (not counted) every build gets --chunks rounds of --chunk calls
 * (default 3 × 1000, one in flight: the same sequence of events every time), each counted on its own.
 * The ratio is taken on the instructions of the request path and the young-generation GC it causes;
 * major GC and the optimizing compiler, which land in one round and not the next, are printed apart.
 * The dumps stay in .bench/paired/callgrind/ for test/bench/callgrind-diff.ts (which names the JavaScript
 * functions from the perf maps V8 writes in /tmp). The floors run so too (`-- thin HEAD --instructions`):
 * what the gateway executes beyond the platform's least, function by function. Several minutes per build.
 *
 * --processes K: K fresh gateway processes per build (each with its own upstream), all in the same
 * alternation, each printed, and per build the median of its processes with their range: a single
 * process's CPU figure carries a bias of its own of up to ±20 % (README, Performance), which K
 * processes per build average out.
 *
 * --v8=FLAGS: node/V8 flags given to every gateway alike. `--v8='--no-memory-reducer
 * --min-semi-space-size=16 --max-semi-space-size=16'` holds V8's heap sizing still, which otherwise
 * decides much of a CPU ratio: in the alternation each gateway sits idle while the others run and the
 * memory reducer shrinks its young generation, and whether a young generation grows to 32 or 64 MB
 * semi-spaces (more page faults, more RSS, more CPU) differs from process to process. With the sizing held,
 * one build's processes agreed within a few per cent where they had spread over ±15 %.
 *
 * --sessions N: each gateway gets N client sessions (or N legacy streams; modern requests have none) and
 * call k goes to session k mod N, as the full bench's 50-session phases do: what spreading the same load
 * over many sessions costs per call.
 *
 * --stdout DIR: each gateway's standard output goes to DIR/<n>-<build>.out (it is dropped otherwise): with
 * --v8=--trace-gc-nvp, a line per GC with what it promoted.
 *
 * --usage: each gateway also reports, when it stops, what its CPU time is made of (user and system time,
 * the main thread and V8's worker threads, minor page faults, peak RSS, its young generation's size:
 * test/bench/usage-probe.mjs), printed after the ratios; the whole process life, start-up included.
 *
 * --alloc DIR: instead of CPU time, the bytes each build allocates per call (V8's sampling heap profiler
 * through test/bench/alloc-probe.mjs, short-lived objects included), over --chunks × --chunk calls each;
 * the profiles stay in DIR for test/bench/alloc-diff.ts (by allocating function, one build or two).
 * With --live, only what is still alive when sampling stops, one second into the load: what the
 * gateway holds while calls are in flight (read it in bytes in all, not per call).
 * With --promoted, only what outlived the young generation (moved to the old one, or allocated there
 * by V8's pretenuring) and was then kept or collected by a major GC: what the major GCs are made of,
 * whose work runs partly on V8's worker threads and which the instruction counts' predictable mode moves.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { signDevToken } from '../../src/auth/dev-token.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { callgrindControl, callgrindPrefix, PREDICTABLE_V8, readDump, type Dump } from './callgrind.js';
import { caller, type Mode } from './paired-callers.js';
import { ROOT } from './targets.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { chunks: { type: 'string' }, chunk: { type: 'string' }, prof: { type: 'string' }, v8: { type: 'string' }, usage: { type: 'boolean', default: false }, alloc: { type: 'string' }, processes: { type: 'string' }, live: { type: 'boolean', default: false }, stdout: { type: 'string' }, promoted: { type: 'boolean', default: false }, instructions: { type: 'boolean', default: false }, warmup: { type: 'string' }, inflight: { type: 'string' }, sessions: { type: 'string' } },
});
const COUNTED = values.instructions;
const CHUNKS = Number(values.chunks ?? (COUNTED ? 3 : 10));
const CHUNK = Number(values.chunk ?? (COUNTED ? 1000 : 2000));
const INFLIGHT = Number(values.inflight ?? (COUNTED ? 1 : 64));
const PROCESSES = Number(values.processes ?? 1);
const SESSIONS = Number(values.sessions ?? 1);
// Under callgrind the JIT needs more calls to settle (its tiers count calls, not time).
const WARMUP = Number(values.warmup ?? (COUNTED ? 6000 : 4000));
/** --v8=FLAGS: node/V8 flags for every gateway (all builds alike), e.g. to hold the heap's sizing still. */
const V8_FLAGS = values.v8?.split(/\s+/).filter(Boolean) ?? [];
const CALLGRIND_DIR = join(ROOT, '.bench', 'paired', 'callgrind');
/** The loader pins itself to core 0 (with the upstreams); the gateways get core 1. */
const pinned = (() => {
  try {
    execFileSync('taskset', ['-p', '-c', '0', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const onCore = (core: number, cmd: string, args: string[]): [string, string[]] => (pinned ? ['taskset', ['-c', String(core), cmd, ...args]] : [cmd, args]);

/** Compiles a ref once into .bench/paired/<sha> (the working tree each time). */
function build(ref: string): string {
  const out = join(ROOT, '.bench', 'paired', ref === 'worktree' ? 'worktree' : execFileSync('git', ['rev-parse', `${ref}^{commit}`], { cwd: ROOT, encoding: 'utf8' }).trim());
  if (ref !== 'worktree' && existsSync(join(out, 'dist', 'main.js'))) return join(out, 'dist', 'main.js');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(join(out, 'src'), { recursive: true });
  if (ref === 'worktree') execFileSync('cp', ['-r', 'src', 'tsconfig.json', 'tsconfig.build.json', 'package.json', out], { cwd: ROOT });
  else execFileSync('tar', ['-x', '-C', out], { input: execFileSync('git', ['archive', '--format=tar', ref, 'src', 'tsconfig.json', 'tsconfig.build.json', 'package.json'], { cwd: ROOT, maxBuffer: 1 << 28 }) });
  // --noCheck: emit only (types are the type-check's business).
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(out, 'tsconfig.build.json'), '--outDir', join(out, 'dist'), '--noCheck'], { cwd: ROOT, stdio: 'ignore' });
  return join(out, 'dist', 'main.js');
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/**
 * The read and write syscalls a process has made (reads and writes of sockets and pipes included):
 * how well a build batches its I/O under load, which a CPU figure cannot tell apart from slower code.
 */
function sysc(pid: number): number {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8');
  return Number(/syscr: (\d+)/.exec(io)![1]) + Number(/syscw: (\d+)/.exec(io)![1]);
}

/** utime + stime of a process, in ms (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

interface Target {
  label: string;
  /** The spec it was started for: with --processes, several targets share one. */
  spec: string;
  child: ChildProcess;
  /** Where callgrind writes this gateway's dumps (--instructions only). */
  dumps: string;
  /** Where the allocation probe writes this gateway's heap profile (--alloc only). */
  allocOut: string | undefined;
  /** Where the usage probe writes what this gateway's CPU time is made of (--usage only). */
  usageOut: string | undefined;
  run(n: number): Promise<void>;
  stop(): Promise<void>;
}

/** The gateway's command line: plain (pinned to core 1), or under callgrind (not pinned: time does not matter). */
function gatewayCommand(main: string, file: string, ref: string, mode: string, dumps: string): [string, string[]] {
  if (COUNTED) {
    const [valgrind, ...vgArgs] = callgrindPrefix(dumps);
    return [valgrind!, [...vgArgs, process.execPath, ...PREDICTABLE_V8, ...V8_FLAGS, main, 'serve', '--config', file]];
  }
  // --prof DIR: each gateway writes a V8 CPU profile into DIR/<ref>-<mode> when it stops.
  const prof = profFlags(`${ref}-${mode}`);
  const alloc = values.alloc ? ['--import', join(ROOT, 'test/bench/alloc-probe.mjs')] : [];
  if (values.usage) alloc.push('--import', join(ROOT, 'test/bench/usage-probe.mjs'));
  return onCore(1, process.execPath, [...V8_FLAGS, ...prof, ...alloc, main, 'serve', '--config', file]);
}

/** A floor's command line, as a gateway's: plain (pinned to core 1), or under callgrind. */
function floorCommand(floor: string, ref: string, dumps: string, args: string[]): [string, string[]] {
  const script = join(ROOT, 'test/bench', floor);
  if (COUNTED) {
    const [valgrind, ...vgArgs] = callgrindPrefix(dumps);
    return [valgrind!, [...vgArgs, process.execPath, ...PREDICTABLE_V8, ...V8_FLAGS, script, ...args]];
  }
  return onCore(1, process.execPath, [...V8_FLAGS, ...profFlags(ref), script, ...args]);
}

/** --prof DIR: node's flags for a V8 CPU profile of a target, written into DIR/<name> when it stops. */
function profFlags(name: string): string[] {
  return values.prof ? ['--cpu-prof', '--cpu-prof-interval', '100', '--cpu-prof-dir', join(values.prof, name)] : [];
}

let started = 0;

async function start(spec: string, label = spec): Promise<Target> {
  // `@NAME=value` settings are that gateway's environment (`HEAD+traced@OTEL_BSP_MAX_EXPORT_BATCH_SIZE=64`);
  // an '@' not followed by NAME= stays part of the ref (`HEAD@{1}`).
  const ownEnv: Record<string, string> = {};
  const buildSpec = spec.replace(/@([A-Z_][A-Z0-9_]*)=([^@]*)/g, (_, name: string, value: string) => ((ownEnv[name] = value), ''));
  const [refMode, option] = buildSpec.split('+') as [string, string | undefined];
  const [ref, mode = 'json'] = refMode.split(':') as [string, string | undefined];
  const floor = FLOORS[ref];
  if (floor && (mode !== 'json' || option !== undefined)) throw new Error(`${spec}: the floors run as they are (JSON answers, no option)`);
  const main = floor ? '' : build(ref);
  const port = await freePort();
  const [upCmd, upArgs] = onCore(0, process.execPath, [join(ROOT, 'test/bench/echo-server.mjs')]);
  const config = {
    metrics: { port: 0 },
    // Sessions answered in the mode named (auto, sse); every other mode's gateway answers JSON.
    server: { host: '127.0.0.1', port, responseMode: mode === 'auto' || mode === 'sse' ? mode : 'json' },
    logging: { level: 'info' },
    upstreams: [{ name: 'up', transport: 'stdio', sandbox: 'none', command: upCmd, args: upArgs, ...(option === 'per-session' ? { sharing: 'per-session', pool: { warm: 1 } } : { sharing: 'shared', pool: { size: 1 } }) }],
    endpoints: [{ path: '/mcp', upstreams: ['up'], ...(option === 'scanned' ? { guardrails: { hiddenText: { definitions: 'strip', results: 'strip', patterns: ['ignore (all )?previous instructions'] } } } : {}) }],
    ...(option === 'auth' ? BENCH_AUTH : {}),
    ...(option === 'redis' ? { store: { redis: { url: await benchRedis() } } } : {}),
    ...(option === 'unaudited' ? { audit: { enabled: false } } : {}),
    ...(option === 'traced' || option === 'traced-json' || option === 'unsampled' ? { tracing: { enabled: true, endpoint: await otlpSink(), protocol: option === 'traced' ? 'http/protobuf' : 'http/json', sampleRatio: option === 'unsampled' ? 0 : 1 } } : {}),
  };
  const file = join(ROOT, '.bench', 'paired', `config-${port}.yaml`);
  writeFileSync(file, JSON.stringify(config));
  const dumps = join(CALLGRIND_DIR, `${started++}-${spec.replace(/[^\w.-]+/g, '_')}.out`);
  const [cmd, args] = floor ? floorCommand(floor, ref, dumps, [String(port), upCmd, ...upArgs]) : gatewayCommand(main, file, ref, mode, dumps);
  const allocOut = values.alloc ? join(values.alloc, `${started - 1}-${spec.replace(/[^\w.-]+/g, '_')}.heapprofile`) : undefined;
  const usageOut = values.usage ? join(ROOT, '.bench', 'paired', `usage-${port}.json`) : undefined;
  if (usageOut) rmSync(usageOut, { force: true });
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, ...ownEnv, ...(allocOut ? { ALLOC_PROBE_OUT: allocOut, ALLOC_PROBE_LIVE: values.live ? '1' : '0', ALLOC_PROBE_PROMOTED: values.promoted ? '1' : '0' } : {}), ...(usageOut ? { USAGE_PROBE_OUT: usageOut } : {}) };
  // --stdout DIR: the gateway's standard output (its log, and what V8 prints for flags like --trace-gc-nvp) kept per build.
  const out = values.stdout ? openSync(join(values.stdout, `${started - 1}-${spec.replace(/[^\w.-]+/g, '_')}.out`), 'w') : 'ignore';
  const child = spawn(cmd, args, { stdio: ['ignore', out, 'inherit'], env });
  if (typeof out === 'number') closeSync(out);
  const origin = `http://127.0.0.1:${port}`;
  // Under valgrind start-up takes 15-40 s on this machine.
  // A floor has no readiness route: any answer says it listens.
  for (let i = 0; i < (COUNTED ? 2400 : 200) && !(await fetch(`${origin}/readyz`).then((r) => r.ok || floor !== undefined, () => false)); i++) await new Promise((r) => setTimeout(r, 50));
  // A legacy session holds a connection for its stream: the POSTs get INFLIGHT of their own besides.
  const pool = new Pool(origin, { connections: INFLIGHT + SESSIONS + 1 });
  const extra: Record<string, string> = option === 'auth' ? { authorization: `Bearer ${await benchToken()}` } : {};
  const callers: Array<() => Promise<void>> = [];
  for (let i = 0; i < SESSIONS; i++) callers.push(await caller(pool, mode as Mode, extra));
  // --sessions N: call k goes to session k mod N, as the full bench's load does.
  let turn = 0;
  const call = SESSIONS === 1 ? callers[0]! : () => callers[turn++ % SESSIONS]!();
  const run = async (n: number) => {
    let left = n;
    await Promise.all(Array.from({ length: INFLIGHT }, async () => {
      while (left-- > 0) await call();
    }));
  };
  await run(WARMUP);
  const stop = async () => {
    await pool.destroy();
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  };
  return { label, spec, child, dumps, allocOut, usageOut, run, stop };
}

/** The pseudo-refs that run a floor of the full bench instead of a Switchboard build. */
const FLOORS: Record<string, string | undefined> = { thin: 'thin-proxy.mjs', stack: 'stack-proxy.mjs' };

/** +auth: JWT authentication with the development key (deploy/dev-keys), one tenant granted everything. */
const BENCH_AUTH = {
  auth: { mode: 'jwt', issuer: 'https://bench.test', audience: ['https://bench.test'], keys: [join(ROOT, 'deploy/dev-keys/dev-public.jwk.json')], algorithms: ['EdDSA'] },
  tenants: [{ name: 'bench', endpoints: ['*'] }],
};

let redis: Promise<TestRedis> | undefined;

/** +redis: one redis-server for the run (every such gateway keeps its sessions and event logs there), stopped at the end. */
async function benchRedis(): Promise<string> {
  redis ??= startRedis();
  return (await redis).url;
}

/** The bearer token of +auth's client: valid for the whole run. */
function benchToken(): Promise<string> {
  return signDevToken({ keyFile: join(ROOT, 'deploy/dev-keys/dev-private.jwk.json'), issuer: 'https://bench.test', audience: 'https://bench.test', tenant: 'bench', subject: 'bench', scopes: [], ttlSeconds: 3600, tenantClaim: 'tenant' });
}

let sink: Promise<string> | undefined;

/** An OTLP/HTTP endpoint that takes every export and keeps nothing (on the loader's core). */
function otlpSink(): Promise<string> {
  sink ??= new Promise((resolve) => {
    const server = createHttpServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
    });
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}`));
    server.unref();
  });
  return sink;
}

async function timed(targets: Target[]): Promise<void> {
  const totals = new Map(targets.map((t) => [t, { cpu: 0, calls: 0, ms: 0, sysc: 0 }]));
  for (let k = 0; k < CHUNKS; k++) {
    for (const t of k % 2 ? [...targets].reverse() : targets) {
      const c0 = cpuMs(t.child.pid!);
      const s0 = sysc(t.child.pid!);
      const t0 = performance.now();
      await t.run(CHUNK);
      const sum = totals.get(t)!;
      sum.cpu += cpuMs(t.child.pid!) - c0;
      sum.sysc += sysc(t.child.pid!) - s0;
      sum.ms += performance.now() - t0;
      sum.calls += CHUNK;
    }
  }
  const perCallCpu = (t: Target) => totals.get(t)!.cpu / totals.get(t)!.calls;
  const specs = [...new Set(targets.map((t) => t.spec))];
  const byBuild = new Map(specs.map((spec) => [spec, targets.filter((t) => t.spec === spec).map(perCallCpu).sort((a, b) => a - b)]));
  const median = (xs: number[]) => (xs.length % 2 ? xs[(xs.length - 1) / 2]! : (xs[xs.length / 2 - 1]! + xs[xs.length / 2]!) / 2);
  const base = median(byBuild.get(specs[0]!)!);
  console.log(`paired: ${CHUNKS} chunks of ${CHUNK} calls each, ${INFLIGHT} in flight, ${PROCESSES} process(es) per build, ${pinned ? 'gateways on core 1, loader and upstreams on core 0' : 'not pinned (no taskset)'}${V8_FLAGS.length ? `, gateways run with ${V8_FLAGS.join(' ')}` : ''}`);
  for (const t of targets) {
    const s = totals.get(t)!;
    console.log(`${t.label.padEnd(24)} ${((s.cpu * 1000) / s.calls).toFixed(1).padStart(7)} µs/call  ${(s.calls / (s.ms / 1000)).toFixed(0).padStart(6)} calls/s  CPU ratio ${(perCallCpu(t) / base).toFixed(3)}  ${(s.sysc / s.calls).toFixed(2)} read/write syscalls per call`);
  }
  if (PROCESSES > 1) {
    // A process's figure carries a bias of its own (code and heap layout); a build's is the median of its processes.
    console.log('per build, the median of its processes (and their range), as a ratio to the first build\'s median:');
    for (const [spec, xs] of byBuild) console.log(`${spec.padEnd(24)} ${(median(xs) / base).toFixed(3)}  (${(xs[0]! / base).toFixed(3)}–${(xs.at(-1)! / base).toFixed(3)})`);
  }
}

/** Rounds of counted calls on one gateway: instrumentation on, then zero, CHUNK calls, dump, per round. */
async function countRounds(t: Target): Promise<Dump[]> {
  const pid = t.child.pid!;
  await callgrindControl(pid, '--instr=on');
  // Switching instrumentation on retranslates all code; a short round lets that and any timer settle.
  await t.run(Math.min(200, CHUNK));
  const rounds: Dump[] = [];
  for (let r = 1; r <= CHUNKS; r++) {
    await callgrindControl(pid, '--zero');
    await t.run(CHUNK);
    await callgrindControl(pid, `--dump=round${r}`);
    rounds.push(readDump(`${t.dumps}.${r}`));
  }
  return rounds;
}

const perCall = (n: number) => (n / CHUNK / 1000).toFixed(1);

async function counted(targets: Target[]): Promise<void> {
  // Counts do not depend on timing, so every build is counted at once.
  const results = await Promise.all(targets.map(countRounds));
  const path = (d: Dump) => d.total - d.buckets['major GC'] - d.buckets.JIT;
  const mean = (ds: Dump[], f: (d: Dump) => number) => ds.reduce((a, d) => a + f(d), 0) / ds.length;
  const base = mean(results[0]!, path);
  console.log(`paired --instructions: ${CHUNKS} rounds of ${CHUNK} calls each after ${WARMUP} uncounted, ${INFLIGHT} in flight, under callgrind (k instructions per call)`);
  console.log(`${'build'.padEnd(24)} ${'path+young GC'.padStart(13)} ${'(rounds)'.padEnd(22)} ${'young GC'.padStart(8)} ${'major GC'.padStart(8)} ${'JIT'.padStart(6)} ${'all'.padStart(7)}  ratio`);
  targets.forEach((t, i) => {
    const ds = results[i]!;
    const cols = [mean(ds, path), mean(ds, (d) => d.buckets['young GC']), mean(ds, (d) => d.buckets['major GC']), mean(ds, (d) => d.buckets.JIT), mean(ds, (d) => d.total)].map(perCall);
    console.log(`${t.label.padEnd(24)} ${cols[0]!.padStart(13)} ${`(${ds.map((d) => perCall(path(d))).join(' ')})`.padEnd(22)} ${cols[1]!.padStart(8)} ${cols[2]!.padStart(8)} ${cols[3]!.padStart(6)} ${cols[4]!.padStart(7)}  ${(mean(ds, path) / base).toFixed(3)}`);
  });
  console.log(`dumps: ${CALLGRIND_DIR}/<build>.out.<round>`);
}

/** Waits for a file the allocation probe writes. */
async function written(file: string): Promise<void> {
  for (let i = 0; i < 600 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 50));
  if (!existsSync(file)) throw new Error(`the allocation probe did not write ${file}`);
}

/** Bytes allocated per call, sampled over CHUNKS × CHUNK calls on each gateway (one after another). */
async function sampled(targets: Target[]): Promise<void> {
  mkdirSync(values.alloc!, { recursive: true });
  console.log(`paired --alloc: ${CHUNKS * CHUNK} calls per build, ${INFLIGHT} in flight, every allocation sampled (1 in 256 bytes)`);
  for (const t of targets) {
    const out = t.allocOut!;
    rmSync(out, { force: true });
    rmSync(`${out}.started`, { force: true });
    t.child.kill('SIGUSR2');
    await written(`${out}.started`);
    if (values.live) {
      // Stopped while the load is in flight: the profile holds what the gateway keeps alive under it.
      const load = t.run(CHUNKS * CHUNK);
      await new Promise((r) => setTimeout(r, 1000));
      t.child.kill('SIGUSR2');
      await written(out);
      await load;
    } else {
      await t.run(CHUNKS * CHUNK);
      t.child.kill('SIGUSR2');
      await written(out);
    }
    const { head } = JSON.parse(readFileSync(out, 'utf8')) as { head: AllocNode };
    console.log(`${t.label.padEnd(24)} ${(total(head) / (CHUNKS * CHUNK)).toFixed(0).padStart(7)} bytes/call  ${out}`);
  }
}

interface AllocNode { selfSize: number; children: AllocNode[] }
const total = (n: AllocNode): number => n.children.reduce((a, c) => a + total(c), n.selfSize);

async function main(): Promise<void> {
  if (positionals.length < 2) throw new Error('name two or more REF[:MODE] to compare');
  mkdirSync(join(ROOT, '.bench', 'paired'), { recursive: true });
  if (values.stdout) mkdirSync(values.stdout, { recursive: true });
  if (COUNTED) {
    rmSync(CALLGRIND_DIR, { recursive: true, force: true });
    mkdirSync(CALLGRIND_DIR, { recursive: true });
  }
  // Under callgrind the builds start and warm up at once as well (each takes a minute or more).
  const targets = COUNTED ? await Promise.all(positionals.map((spec) => start(spec))) : [];
  // --processes K: K fresh gateways per build, started in turn (A1 B1 A2 B2 …) so that no build's
  // processes are all early or all late.
  if (!COUNTED) for (let i = 0; i < PROCESSES; i++) for (const spec of positionals) targets.push(await start(spec, PROCESSES > 1 ? `${spec}#${i + 1}` : spec));
  try {
    await (COUNTED ? counted(targets) : values.alloc ? sampled(targets) : timed(targets));
  } finally {
    for (const t of targets) await t.stop();
    await (await redis)?.stop();
  }
  if (values.usage) printUsage(targets);
}

/** What each gateway's usage probe wrote when it stopped (--usage). */
function printUsage(targets: Target[]): void {
  console.log('usage over each gateway\'s life: CPU s (user / system), main thread and V8 worker threads s, minor faults, peak RSS MB, young generation MB');
  for (const t of targets) {
    const line = t.usageOut && existsSync(t.usageOut) ? readFileSync(t.usageOut, 'utf8').trim().split('\n').at(-1) : undefined;
    if (!line) {
      console.log(`${t.label.padEnd(24)} (no report)`);
      continue;
    }
    const u = JSON.parse(line) as { userMs: number; systemMs: number; minorFaults: number; maxRssKb: number; youngBytes?: number; threadsMs: Record<string, number> };
    const s = (ms: number | undefined) => ((ms ?? 0) / 1000).toFixed(2);
    console.log(`${t.label.padEnd(24)} ${s(u.userMs)} / ${s(u.systemMs)}  main ${s(u.threadsMs.MainThread)}  V8 workers ${s(u.threadsMs.V8Worker)}  ${u.minorFaults} faults  ${(u.maxRssKb / 1024).toFixed(0)} MB RSS  young ${((u.youngBytes ?? 0) / 1048576).toFixed(0)} MB`);
  }
}

await main();
