/**
 * `npm run bench:streams`: many sessions each holding an open SSE stream on one gateway process (#20.3).
 *
 *   npm run bench:streams -- [--streams 10000] [--transport streamable|legacy|both] [--ref worktree|COMMIT]
 *
 * For each transport: a compiled gateway (shared stdio upstream that changes its tool list on a signal
 * file, keep-alives every second) gets N sessions, each with its open stream (the GET stream of a
 * Streamable HTTP session, or a legacy HTTP+SSE stream) on a connection of its own. With all open and the
 * keep-alives running, it reads the gateway's RSS, then makes the upstream change its tools and times
 * until every stream has received notifications/tools/list_changed. Goals (#20): within 512 MB RSS, all
 * delivered in under 2 s. Every wait is bounded; only loopback is used.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { RawHttp } from './load-raw.js';
import { descendants, rssBytes, totalRss } from './proc-stats.js';
import { cleanEnv, freePort, ROOT } from './targets.js';

const { values } = parseArgs({
  options: {
    streams: { type: 'string', default: '10000' },
    transport: { type: 'string', default: 'both' },
    ref: { type: 'string', default: 'worktree' },
    'open-parallel': { type: 'string', default: '64' },
  },
});
const N = Number(values.streams);
const PARALLEL = Number(values['open-parallel']);
const MB = 1024 * 1024;
const RSS_GOAL_MB = 512;
const DELIVERY_GOAL_MS = 2000;
const log = (s: string) => process.stderr.write(`${s}\n`);

/** Compiles the working tree (or a commit) once into .bench/streams/<ref>, so tsx is not what is measured. */
function build(ref: string): string {
  const out = join(ROOT, '.bench', 'streams', ref === 'worktree' ? 'worktree' : execFileSync('git', ['rev-parse', `${ref}^{commit}`], { cwd: ROOT, encoding: 'utf8' }).trim());
  if (ref !== 'worktree' && existsSync(join(out, 'dist', 'main.js'))) return join(out, 'dist', 'main.js');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  if (ref === 'worktree') execFileSync('cp', ['-r', 'src', 'tsconfig.json', 'tsconfig.build.json', 'package.json', out], { cwd: ROOT });
  else execFileSync('tar', ['-x', '-C', out], { input: execFileSync('git', ['archive', '--format=tar', ref, 'src', 'tsconfig.json', 'tsconfig.build.json', 'package.json'], { cwd: ROOT, maxBuffer: 1 << 28 }) });
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(out, 'tsconfig.build.json'), '--outDir', join(out, 'dist'), '--noCheck'], { cwd: ROOT, stdio: 'ignore' });
  return join(out, 'dist', 'main.js');
}

/**
 * One open SSE stream on a raw socket: the cheapest reader the client side can have, so that 10,000 of
 * them do not make the loader the limit. It watches the bytes for the list_changed notification (and,
 * for a legacy stream, the endpoint event and the answers to its own requests).
 */
class RawStream {
  readonly socket: Socket;
  #tail = '';
  #status: number | undefined;
  readonly #watchers: Array<{ find: RegExp; resolve: (m: RegExpExecArray) => void }> = [];
  listChangedAt: number | undefined;
  keepAlives = 0;
  closed = false;

  constructor(port: number, head: string) {
    this.socket = connect(port, '127.0.0.1', () => this.socket.write(head));
    this.socket.setEncoding('utf8');
    this.socket.on('data', (chunk: string) => this.#data(chunk));
    this.socket.on('error', () => {});
    this.socket.on('close', () => (this.closed = true));
  }

  /** Resolves with the first match of `find` in what arrives (bounded by `ms`). */
  wait(find: RegExp, ms: number): Promise<RegExpExecArray> {
    const m = find.exec(this.#tail);
    if (m) return Promise.resolve(m);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${find} within ${ms} ms (HTTP ${this.#status}; ${JSON.stringify(this.#tail.slice(0, 200))})`)), ms);
      this.#watchers.push({ find, resolve: (x) => (clearTimeout(timer), resolve(x)) });
    });
  }

  #data(chunk: string): void {
    if (this.#status === undefined) this.#status = Number(/^HTTP\/1\.1 (\d+)/.exec(chunk)?.[1] ?? 0);
    if (this.listChangedAt === undefined && chunk.includes('notifications/tools/list_changed')) this.listChangedAt = performance.now();
    if (chunk.startsWith(':') || chunk.includes('\n:')) this.keepAlives++;
    // Only the recent bytes are kept (watchers look for short patterns; a long stream must not grow here).
    this.#tail = (this.#tail + chunk).slice(-4096);
    for (let i = this.#watchers.length - 1; i >= 0; i--) {
      const m = this.#watchers[i]!.find.exec(this.#tail);
      if (m) this.#watchers.splice(i, 1)[0]!.resolve(m);
    }
  }
}

const INIT = (id: number) => ({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench-streams', version: '1' } } });
const INITIALIZED = { jsonrpc: '2.0', method: 'notifications/initialized' };

async function openStreamable(http: RawHttp, port: number): Promise<RawStream> {
  const init = await http.post('/mcp', {}, INIT(0) as never, 0);
  const sid = init.headers['mcp-session-id'];
  if (typeof sid !== 'string') throw new Error(`initialize: HTTP ${init.status}, no session id`);
  const headers = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
  const n = await http.post('/mcp', headers, INITIALIZED as never);
  if (n.status !== 202) throw new Error(`notifications/initialized: HTTP ${n.status}`);
  const s = new RawStream(port, `GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: ${sid}\r\nMcp-Protocol-Version: 2025-11-25\r\n\r\n`);
  await s.wait(/^HTTP\/1\.1 200/, 30_000);
  return s;
}

async function openLegacy(http: RawHttp, port: number): Promise<RawStream> {
  const s = new RawStream(port, 'GET /sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n');
  const endpoint = (await s.wait(/event: endpoint\ndata: (\S+)\n/, 30_000))[1]!;
  const path = new URL(endpoint, 'http://127.0.0.1').pathname + new URL(endpoint, 'http://127.0.0.1').search;
  const post = async (m: object) => {
    const r = await http.pool.request({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body: JSON.stringify(m) });
    await r.body.dump();
    if (r.statusCode !== 202) throw new Error(`legacy POST: HTTP ${r.statusCode}`);
  };
  await post(INIT(1));
  await s.wait(/"id":1,"result"/, 30_000);
  await post(INITIALIZED);
  return s;
}

interface Figures {
  transport: string;
  streams: number;
  failures: number;
  firstError?: string;
  openSeconds: number;
  rssIdleMB: number;
  rssMB: number;
  perStreamKB: number;
  childrenRssMB: number;
  keepAlivesSeen: number;
  delivered: number;
  deliveredMsP50: number;
  deliveredMsMax: number;
  /** From the first stream's notification to the last one's: the fan-out alone, without the upstream's change. */
  fanOutMs: number;
}

async function measure(main: string, transport: 'streamable' | 'legacy'): Promise<Figures> {
  const port = await freePort();
  const dir = join(ROOT, '.bench', 'streams', `run-${port}`);
  mkdirSync(dir, { recursive: true });
  const shiftFile = join(dir, 'shift');
  const config = {
    server: { host: '127.0.0.1', port, maxConnections: N + 2000, keepAliveMs: 1000 },
    session: { maxSessions: N + 1000 },
    metrics: { enabled: false },
    logging: { level: 'warn' },
    upstreams: [{ name: 'up', transport: 'stdio', sandbox: 'none', command: process.execPath, args: [join(ROOT, 'test/fixtures/shifty-server.mjs'), '--add-tool'], env: { SHIFT_FILE: shiftFile }, sharing: 'shared', pool: { size: 1 } }],
    endpoints: [{ path: '/mcp', upstreams: ['up'] }], // its legacy HTTP+SSE stream is /sse
  };
  const file = join(dir, 'config.yaml');
  writeFileSync(file, JSON.stringify(config));
  const child = spawn(process.execPath, [main, 'serve', '--config', file], { stdio: ['ignore', 'ignore', 'inherit'], env: cleanEnv() });
  const http = new RawHttp(`http://127.0.0.1:${port}`, PARALLEL);
  const streams: RawStream[] = [];
  try {
    for (let i = 0; i < 200 && !(await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false)); i++) await sleep(50);
    const pid = child.pid!;
    const rssIdle = rssBytes(pid) ?? NaN;
    const started = performance.now();
    const deadline = started + 180_000;
    let next = 0;
    let failures = 0;
    let firstError: string | undefined;
    await Promise.all(
      Array.from({ length: PARALLEL }, async () => {
        while (next < N && performance.now() < deadline && failures <= 20) {
          next++;
          try {
            streams.push(await (transport === 'streamable' ? openStreamable(http, port) : openLegacy(http, port)));
          } catch (err) {
            failures++;
            firstError ??= (err as Error).message;
          }
        }
      }),
    );
    const openSeconds = (performance.now() - started) / 1000;
    log(`  ${transport}: ${streams.length} streams open in ${openSeconds.toFixed(1)} s (${failures} failures${firstError ? `: ${firstError}` : ''})`);
    await sleep(3000); // keep-alives run on every stream (1 s) while the memory settles
    const rss = rssBytes(pid) ?? NaN;
    const childrenRss = totalRss(descendants(pid));
    const keepAlivesSeen = streams.filter((s) => s.keepAlives > 0).length;
    const t0 = performance.now();
    writeFileSync(shiftFile, '');
    const until = t0 + 30_000;
    while (performance.now() < until && streams.some((s) => s.listChangedAt === undefined && !s.closed)) await sleep(20);
    const times = streams.flatMap((s) => (s.listChangedAt === undefined ? [] : [s.listChangedAt - t0])).sort((a, b) => a - b);
    return {
      transport,
      streams: streams.length,
      failures,
      ...(firstError === undefined ? {} : { firstError }),
      openSeconds,
      rssIdleMB: rssIdle / MB,
      rssMB: rss / MB,
      perStreamKB: (rss - rssIdle) / 1024 / Math.max(1, streams.length),
      childrenRssMB: childrenRss / MB,
      keepAlivesSeen,
      delivered: times.length,
      deliveredMsP50: times[Math.floor(times.length / 2)] ?? NaN,
      deliveredMsMax: times.at(-1) ?? NaN,
      fanOutMs: times.length > 0 ? times.at(-1)! - times[0]! : NaN,
    };
  } finally {
    for (const s of streams) s.socket.destroy();
    await http.close();
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

const main = build(values.ref);
const transports = values.transport === 'both' ? (['streamable', 'legacy'] as const) : [values.transport as 'streamable' | 'legacy'];
const results: Figures[] = [];
for (const t of transports) {
  log(`[streams] ${t}: opening ${N}`);
  results.push(await measure(main, t));
}
const f1 = (x: number) => x.toFixed(1);
console.log('| transport | streams open | RSS idle → open (MB) | per stream (KB) | keep-alives seen | list_changed delivered | p50 / max since change (ms) | fan-out first→last (ms) | goals (≤ 512 MB, < 2 s) |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const r of results) {
  const pass = r.streams === N && r.rssMB <= RSS_GOAL_MB && r.delivered === r.streams && r.deliveredMsMax < DELIVERY_GOAL_MS;
  console.log(`| ${r.transport} | ${r.streams}/${N} (${r.failures} failed, ${f1(r.openSeconds)} s) | ${f1(r.rssIdleMB)} → ${f1(r.rssMB)} | ${f1(r.perStreamKB)} | ${r.keepAlivesSeen} | ${r.delivered} | ${Math.round(r.deliveredMsP50)} / ${Math.round(r.deliveredMsMax)} | ${Math.round(r.fanOutMs)} | ${pass ? 'PASS' : 'MISS'} |`);
}
console.log(JSON.stringify(results));
writeFileSync(join(ROOT, '.bench', 'streams.json'), JSON.stringify({ at: new Date().toISOString(), streams: N, results }, null, 2));
