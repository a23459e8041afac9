import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { descendants } from './proc-stats.js';
import type { Peers } from './peers.js';

/** How a client reaches a target. */
export type Access =
  | { kind: 'stdio'; command: string; args: string[] }
  | { kind: 'streamable'; url: string; json: boolean }
  | { kind: 'sse'; url: string }
  /** 2026-07-28 stateless requests on the Streamable HTTP endpoint: no initialize, no session. */
  | { kind: 'modern'; url: string };

export type UpstreamName = 'echo' | 'everything';

export interface TargetSpec {
  /** Short stable name used in tables and JSON, e.g. "switchboard/json/shared". */
  id: string;
  family: 'direct' | 'floor' | 'stack' | 'switchboard' | 'supergateway' | 'mcp-proxy';
  /** streamable-auto: `responseMode: auto` (JSON unless the answer must stream; the echo never must). */
  transport: 'stdio' | 'streamable-json' | 'streamable-auto' | 'streamable-sse' | 'legacy-sse' | 'modern-json';
  /** How upstream processes relate to client sessions (for peers: what their architecture does). */
  sharing: 'shared' | 'per-session';
}

export interface RunningTarget {
  spec: TargetSpec;
  access: Access;
  /** The gateway process whose CPU and memory are measured; undefined for the direct floor. */
  pid: number | undefined;
  origin: string | undefined;
  stop(): Promise<void>;
}

export const ROOT = resolve(import.meta.dirname, '../..');

export function upstreamCommand(u: UpstreamName): { command: string; args: string[] } {
  return u === 'echo'
    ? { command: process.execPath, args: [join(ROOT, 'test/bench/echo-server.mjs')] }
    : { command: process.execPath, args: [join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'] };
}

/** Every target, in the order they run: the floor first, then Switchboard, then the peers. */
export const TARGETS: TargetSpec[] = [
  { id: 'direct/stdio', family: 'direct', transport: 'stdio', sharing: 'per-session' },
  // The thinnest possible Node.js HTTP-to-stdio proxy (test/bench/thin-proxy.mjs): the platform's share of any gateway's cost.
  { id: 'floor/thin-proxy', family: 'floor', transport: 'streamable-json', sharing: 'shared' },
  // The thin proxy on the charter's request-path libraries (Fastify, a pino line, prom-client metrics) and
  // nothing else (test/bench/stack-proxy.mjs): what those libraries alone add to the platform's cost.
  { id: 'floor/stack', family: 'stack', transport: 'streamable-json', sharing: 'shared' },
  { id: 'switchboard/json/shared', family: 'switchboard', transport: 'streamable-json', sharing: 'shared' },
  { id: 'switchboard/auto/shared', family: 'switchboard', transport: 'streamable-auto', sharing: 'shared' },
  { id: 'switchboard/sse/shared', family: 'switchboard', transport: 'streamable-sse', sharing: 'shared' },
  { id: 'switchboard/legacy/shared', family: 'switchboard', transport: 'legacy-sse', sharing: 'shared' },
  // 2026-07-28 clients: each call a stateless POST (JSON answer) on the same endpoint as json/shared.
  { id: 'switchboard/modern/shared', family: 'switchboard', transport: 'modern-json', sharing: 'shared' },
  { id: 'switchboard/json/per-session', family: 'switchboard', transport: 'streamable-json', sharing: 'per-session' },
  { id: 'switchboard/sse/per-session', family: 'switchboard', transport: 'streamable-sse', sharing: 'per-session' },
  { id: 'switchboard/legacy/per-session', family: 'switchboard', transport: 'legacy-sse', sharing: 'per-session' },
  // Modern requests have no session: the gateway keeps one standing per principal, and every bench
  // client is the same (anonymous) principal, so this measures one leased instance, not one per client.
  { id: 'switchboard/modern/per-session', family: 'switchboard', transport: 'modern-json', sharing: 'per-session' },
  // supergateway's SSE mode writes every session's messages to one child and broadcasts its output.
  { id: 'supergateway/legacy', family: 'supergateway', transport: 'legacy-sse', sharing: 'shared' },
  // --stateful: one child per session (its stateless mode spawns a child per request).
  { id: 'supergateway/streamable', family: 'supergateway', transport: 'streamable-sse', sharing: 'per-session' },
  // mcp-proxy: one child and one SDK client, a proxy SDK server per session.
  { id: 'mcp-proxy/legacy', family: 'mcp-proxy', transport: 'legacy-sse', sharing: 'shared' },
  { id: 'mcp-proxy/streamable', family: 'mcp-proxy', transport: 'streamable-sse', sharing: 'shared' },
];

/** Warm spares for per-session Switchboard: enough that paced session setups always find one. */
export const WARM_SPARES = 4;

/**
 * The environment every process the harness starts gets: only what a server needs to run. Inherited
 * extras distort start-up; NODE_EXTRA_CA_CERTS alone adds ~80 ms to every node spawn on this machine,
 * which would be charged to whichever gateway passes its environment on to the upstreams it spawns.
 */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const k of ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR']) if (process.env[k] !== undefined) env[k] = process.env[k];
  return env;
}

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolvePort(port));
    });
  });
}

async function waitForPort(port: number, child: ChildProcess, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`exited with ${child.exitCode ?? child.signalCode} before listening`);
    const ok = await new Promise<boolean>((r) => {
      const s = createConnection({ host: '127.0.0.1', port }, () => {
        s.destroy();
        r(true);
      });
      s.once('error', () => r(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`not listening on ${port} after ${timeoutMs} ms`);
}

/** Every process the harness started and has not stopped yet, for the last-resort cleanup on exit. */
const live = new Set<ChildProcess>();

function killTree(pid: number, extra: readonly number[]): void {
  for (const target of [-pid, ...extra]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

/** SIGKILLs every started process group and its descendants; safe to call from an exit handler. */
export function killAllSync(): void {
  for (const child of live) {
    if (child.pid === undefined) continue;
    killTree(child.pid, descendants(child.pid));
  }
  live.clear();
}

/**
 * Starts a server process in its own process group. Stopping sends SIGTERM to the group, waits, then
 * SIGKILLs the group and every descendant seen (Switchboard puts each upstream in a group of its own).
 */
async function startProcess(name: string, command: string, args: string[], port: number, logDir: string, graceMs: number, env: NodeJS.ProcessEnv = cleanEnv()): Promise<{ pid: number; stop(): Promise<void> }> {
  // One log per target and run (the audit log alone is a line per call): truncated, not appended to.
  const logFd = openSync(join(logDir, `${name.replace(/\//g, '_')}.log`), 'w');
  const child = spawn(command, args, { cwd: ROOT, env, detached: true, stdio: ['ignore', logFd, logFd] });
  closeSync(logFd);
  live.add(child);
  const stop = async () => {
    if (!live.has(child)) return;
    const pid = child.pid!;
    const seen = descendants(pid);
    const exited = child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((r) => child.once('exit', () => r()));
    try {
      process.kill(-pid, 'SIGTERM');
    } catch {
      /* gone */
    }
    // Shutdown is not measured: brief grace (long enough under --cpu-prof for node to write its profile),
    // then the group and every descendant go.
    await Promise.race([exited, new Promise((r) => setTimeout(r, graceMs))]);
    killTree(pid, [...seen, ...descendants(pid)]);
    live.delete(child);
  };
  try {
    await waitForPort(port, child, 30_000);
  } catch (err) {
    await stop();
    throw new Error(`${name}: ${(err as Error).message} (see ${logDir})`);
  }
  return { pid: child.pid!, stop };
}

export interface StartOptions {
  upstream: UpstreamName;
  /** Compiled Switchboard entry point (dist-style main.js), so that tsx is not what gets measured. */
  switchboardMain: string;
  peers: Peers;
  workDir: string;
  /** Extra node flags for the gateway process, e.g. --cpu-prof. */
  nodeFlags?: string[];
}

export async function startTarget(spec: TargetSpec, o: StartOptions): Promise<RunningTarget> {
  const up = upstreamCommand(o.upstream);
  if (spec.family === 'direct') {
    return { spec, access: { kind: 'stdio', ...up }, pid: undefined, origin: undefined, stop: async () => {} };
  }
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const flags = o.nodeFlags ?? [];
  const grace = flags.length > 0 ? 10_000 : 500;
  const name = `${o.upstream}-${spec.id}${flags.length > 0 ? '-profiled' : ''}`;
  let proc: { pid: number; stop(): Promise<void> };
  let access: Access;
  switch (spec.family) {
    case 'switchboard': {
      const perSession = spec.sharing === 'per-session';
      // JSON is valid YAML, so the config needs no serializer.
      const config = {
        // Modern answers are JSON whatever the mode (SSE only once a notification precedes the result).
        server: { host: '127.0.0.1', port, responseMode: spec.transport === 'streamable-sse' || spec.transport === 'legacy-sse' ? 'sse' : spec.transport === 'streamable-auto' ? 'auto' : 'json' },
        session: { maxSessions: 20_000 },
        // Metrics on as by default, served on a port of their own: two gateways are up at once when a
        // 2026-07-28 target is paired with its JSON session variant (measureEraPaired).
        metrics: { port: 0 },
        logging: { level: 'info' },
        upstreams: [
          {
            name: 'up',
            transport: 'stdio',
            sandbox: 'none',
            ...up,
            sharing: spec.sharing,
            pool: perSession ? { warm: WARM_SPARES, max: 400, queue: 400 } : { size: 1 },
          },
        ],
        endpoints: [{ path: '/mcp', upstreams: ['up'] }],
      };
      const file = join(o.workDir, `${name.replace(/\//g, '_')}.yaml`);
      writeFileSync(file, JSON.stringify(config, null, 2));
      proc = await startProcess(name, process.execPath, [...flags, o.switchboardMain, 'serve', '--config', file], port, o.workDir, grace);
      access =
        spec.transport === 'legacy-sse' ? { kind: 'sse', url: `${origin}/sse` } : spec.transport === 'modern-json' ? { kind: 'modern', url: `${origin}/mcp` } : { kind: 'streamable', url: `${origin}/mcp`, json: spec.transport === 'streamable-json' };
      break;
    }
    case 'supergateway': {
      const cmd = [up.command, ...up.args].map((a) => `'${a}'`).join(' ');
      const out = spec.transport === 'legacy-sse' ? ['--outputTransport', 'sse'] : ['--outputTransport', 'streamableHttp', '--stateful'];
      // --logLevel none: at "info" it serializes every message to its log, which no deployment would want measured.
      proc = await startProcess(name, process.execPath, [...flags, o.peers.supergateway, '--stdio', cmd, '--port', String(port), '--logLevel', 'none', ...out], port, o.workDir, grace);
      access = spec.transport === 'legacy-sse' ? { kind: 'sse', url: `${origin}/sse` } : { kind: 'streamable', url: `${origin}/mcp`, json: false };
      break;
    }
    case 'floor':
    case 'stack': {
      const script = spec.family === 'floor' ? 'thin-proxy.mjs' : 'stack-proxy.mjs';
      proc = await startProcess(name, process.execPath, [...flags, join(ROOT, 'test/bench', script), String(port), up.command, ...up.args], port, o.workDir, grace);
      access = { kind: 'streamable', url: `${origin}/mcp`, json: true };
      break;
    }
    case 'mcp-proxy': {
      const server = spec.transport === 'legacy-sse' ? 'sse' : 'stream';
      proc = await startProcess(name, process.execPath, [...flags, o.peers.mcpProxy, '--host', '127.0.0.1', '--port', String(port), '--server', server, '--', up.command, ...up.args], port, o.workDir, grace);
      access = spec.transport === 'legacy-sse' ? { kind: 'sse', url: `${origin}/sse` } : { kind: 'streamable', url: `${origin}/mcp`, json: false };
      break;
    }
  }
  if (spec.family === 'switchboard') await waitReady(origin);
  return { spec, access, pid: proc.pid, origin, stop: proc.stop };
}

/** Switchboard listens before its upstream is up; /readyz says when the shared instance is ready. */
async function waitReady(origin: string): Promise<void> {
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    try {
      if ((await fetch(`${origin}/readyz`)).status === 200) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${origin} not ready after 30 s`);
}
