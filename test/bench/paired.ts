/**
 * `npm run bench:paired -- REF[:MODE][+traced] REF[:MODE][+traced] … [--chunks 10] [--chunk 2000]`
 *
 * CPU per call of gateway builds compared in one run, paired: every build runs at once (each on its
 * own loopback port, with its own echo upstream), and the load alternates between them in small
 * count-bounded chunks, so that the machine's drift (a shared, noisy host) falls on all of them alike.
 * With taskset the gateways share one core and the loader and upstreams the other, so that the
 * scheduler's placement does not favour one build. MODE: json (Streamable HTTP session, JSON answers;
 * the default), legacy (HTTP+SSE session) or modern (2026-07-28 stateless requests). REF: a commit, or
 * "worktree". +traced: that gateway runs with tracing on (every request sampled, spans exported as
 * OTLP/HTTP protobuf to a sink in this process, which answers 200 and keeps nothing), to measure what
 * tracing costs per call against the same build without it. Prints each one's gateway CPU µs per call
 * and its ratio to the first. --prof DIR: V8 CPU
 * profiles of the gateways, for test/bench/profile-diff.ts.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { ROOT } from './targets.js';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { chunks: { type: 'string', default: '10' }, chunk: { type: 'string', default: '2000' }, prof: { type: 'string' } } });
const CHUNKS = Number(values.chunks);
const CHUNK = Number(values.chunk);
const INFLIGHT = 64;
const WARMUP = 4000;
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

/** utime + stime of a process, in ms (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

interface Target {
  label: string;
  child: ChildProcess;
  run(n: number): Promise<void>;
  stop(): Promise<void>;
}

async function start(spec: string): Promise<Target> {
  const [refMode, option] = spec.split('+') as [string, string | undefined];
  const [ref, mode = 'json'] = refMode.split(':') as [string, string | undefined];
  const main = build(ref);
  const port = await freePort();
  const [upCmd, upArgs] = onCore(0, process.execPath, [join(ROOT, 'test/bench/echo-server.mjs')]);
  const config = {
    metrics: { port: 0 },
    server: { host: '127.0.0.1', port, responseMode: 'json' },
    logging: { level: 'info' },
    upstreams: [{ name: 'up', transport: 'stdio', sandbox: 'none', command: upCmd, args: upArgs, sharing: 'shared', pool: { size: 1 } }],
    endpoints: [{ path: '/mcp', upstreams: ['up'] }],
    ...(option === 'traced' ? { tracing: { enabled: true, endpoint: await otlpSink(), protocol: 'http/protobuf', sampleRatio: 1 } } : {}),
  };
  const file = join(ROOT, '.bench', 'paired', `config-${port}.yaml`);
  writeFileSync(file, JSON.stringify(config));
  // --prof DIR: each gateway writes a V8 CPU profile into DIR/<ref>-<mode> when it stops.
  const prof = values.prof ? ['--cpu-prof', '--cpu-prof-dir', join(values.prof, `${ref}-${mode}`)] : [];
  const [cmd, args] = onCore(1, process.execPath, [...prof, main, 'serve', '--config', file]);
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'], env: { PATH: process.env.PATH, HOME: process.env.HOME } });
  const origin = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200 && !(await fetch(`${origin}/readyz`).then((r) => r.ok, () => false)); i++) await new Promise((r) => setTimeout(r, 50));
  const pool = new Pool(origin, { connections: INFLIGHT + 1 });
  const call = mode === 'legacy' ? await legacyCaller(pool) : mode === 'modern' ? modernCaller(pool) : await sessionCaller(pool);
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
  return { label: spec, child, run, stop };
}

const ECHO = { name: 'echo', arguments: { message: 'hello' } };
let nextId = 1;

async function expectHello(body: { text(): Promise<string> }): Promise<void> {
  const t = await body.text();
  if (!t.includes('hello')) throw new Error(`unexpected answer: ${t.slice(0, 200)}`);
}

async function sessionCaller(pool: Pool): Promise<() => Promise<void>> {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
  const init = await pool.request({ path: '/mcp', method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'paired', version: '1' } } }) });
  await init.body.text();
  const h = { ...headers, 'mcp-session-id': String(init.headers['mcp-session-id']) };
  await (await pool.request({ path: '/mcp', method: 'POST', headers: h, body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' })).body.text();
  return async () => expectHello((await pool.request({ path: '/mcp', method: 'POST', headers: h, body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: ECHO }) })).body);
}

function modernCaller(pool: Pool): () => Promise<void> {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' };
  const _meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
  return async () => expectHello((await pool.request({ path: '/mcp', method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { ...ECHO, _meta } }) })).body);
}

/** HTTP+SSE: answers arrive on the session's one stream, matched by id. */
async function legacyCaller(pool: Pool): Promise<() => Promise<void>> {
  const sse = await pool.request({ path: '/sse', method: 'GET', headers: { accept: 'text/event-stream' } });
  const waiting = new Map<number, (text: string) => void>();
  let endpoint!: (url: string) => void;
  const url = new Promise<string>((r) => (endpoint = r));
  let buf = '';
  sse.body.setEncoding('utf8');
  sse.body.on('data', (chunk: string) => {
    buf += chunk;
    for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.replace(/^data: ?/, '')).join('\n');
      if (/^event: ?endpoint$/m.test(block)) endpoint(data);
      else if (data) waiting.get((JSON.parse(data) as { id: number }).id)?.(data);
    }
  });
  const path = await url;
  const post = async (msg: { id?: number; [k: string]: unknown }): Promise<string | undefined> => {
    const answered = msg.id === undefined ? undefined : new Promise<string>((r) => waiting.set(msg.id as number, r));
    await (await pool.request({ path, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(msg) })).body.text();
    return answered;
  };
  await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'paired', version: '1' } } });
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return async () => {
    const id = nextId++;
    const text = await post({ jsonrpc: '2.0', id, method: 'tools/call', params: ECHO });
    waiting.delete(id);
    if (!text?.includes('hello')) throw new Error(`unexpected answer: ${text?.slice(0, 200)}`);
  };
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

async function main(): Promise<void> {
  if (positionals.length < 2) throw new Error('name two or more REF[:MODE] to compare');
  mkdirSync(join(ROOT, '.bench', 'paired'), { recursive: true });
  const targets: Target[] = [];
  for (const spec of positionals) targets.push(await start(spec));
  const totals = new Map(targets.map((t) => [t.label, { cpu: 0, calls: 0, ms: 0 }]));
  for (let k = 0; k < CHUNKS; k++) {
    for (const t of k % 2 ? [...targets].reverse() : targets) {
      const c0 = cpuMs(t.child.pid!);
      const t0 = performance.now();
      await t.run(CHUNK);
      const sum = totals.get(t.label)!;
      sum.cpu += cpuMs(t.child.pid!) - c0;
      sum.ms += performance.now() - t0;
      sum.calls += CHUNK;
    }
  }
  for (const t of targets) await t.stop();
  const base = totals.get(targets[0]!.label)!;
  console.log(`paired: ${CHUNKS} chunks of ${CHUNK} calls each, 64 in flight, ${pinned ? 'gateways on core 1, loader and upstreams on core 0' : 'not pinned (no taskset)'}`);
  for (const [label, s] of totals) {
    const ratio = s.cpu / s.calls / (base.cpu / base.calls);
    console.log(`${label.padEnd(24)} ${((s.cpu * 1000) / s.calls).toFixed(1).padStart(7)} µs/call  ${(s.calls / (s.ms / 1000)).toFixed(0).padStart(6)} calls/s  CPU ratio ${ratio.toFixed(3)}`);
  }
}

await main();
