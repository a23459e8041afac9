import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { listeningAddress } from '../helpers/processes.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import type { Replica } from '../helpers/replicas.js';

const EVERYTHING = resolve('node_modules/@modelcontextprotocol/server-everything/dist/index.js');

/** A replica of the soak: its process, and whether it is (still) one clients should use. */
export interface SoakReplica extends Replica {
  live: boolean;
}

/** What one sample of a replica's process shows. */
export interface ProcessSample {
  rssMb: number;
  fds: number;
  children: number;
}

/**
 * Three gateway replicas on one redis-server of the soak's own, loopback only, with the shipped
 * heartbeat timings; two endpoints: /mcp on a `shared` upstream, /own on a `per-session` one (each
 * server-everything over stdio). Replicas can be killed, stopped and replaced; Redis frozen and restarted.
 */
export class SoakCluster {
  readonly replicas: SoakReplica[] = [];
  redis!: TestRedis;
  #config = '';
  #started = 0;

  async start(count: number): Promise<void> {
    this.redis = await startRedis();
    const dir = mkdtempSync(join(tmpdir(), 'swb-soak-'));
    this.#config = join(dir, 'config.yaml');
    writeFileSync(this.#config, configYaml(this.redis.url));
    await Promise.all(Array.from({ length: count }, () => this.add()));
  }

  live(): SoakReplica[] {
    return this.replicas.filter((r) => r.live);
  }

  /** Waits (up to 15 s) until every live replica says it is ready (/readyz 200); resolves to the ms it took. */
  async ready(): Promise<number> {
    const t0 = Date.now();
    const up = async (r: SoakReplica) => (await fetch(new URL('/readyz', r.base)).then((res) => (void res.text(), res.status)).catch(() => 0)) === 200;
    while (Date.now() - t0 < 15_000 && !(await Promise.all(this.live().map(up))).every(Boolean)) await sleep(100);
    return Date.now() - t0;
  }

  /** Waits (up to 15 s) until an echo on a new session of `r`'s shared endpoint is answered; resolves to the ms it took. */
  async answering(r: SoakReplica): Promise<number> {
    const t0 = Date.now();
    while (Date.now() - t0 < 15_000 && r.live && !(await echoes(r.base).catch(() => false))) await sleep(200);
    return Date.now() - t0;
  }

  /** Starts one more replica and makes it live. */
  async add(): Promise<SoakReplica> {
    const name = `r${this.#started++}`;
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve', '--config', this.#config], {
      env: { ...process.env, LOG_LEVEL: process.env.SOAK_LOG_LEVEL ?? 'info' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
    const base = await listeningAddress(child, 60_000);
    if (process.env.REPLICA_LOG) child.stdout!.on('data', (b: Buffer) => process.stderr.write(`[${name}] ${b}`));
    else child.stdout!.resume();
    const r: SoakReplica = { name, base, child, exited, live: true };
    this.replicas.push(r);
    return r;
  }

  /** Takes a replica out of the clients' rotation and sends it a signal; resolves when it exited. */
  async signal(r: SoakReplica, sig: NodeJS.Signals): Promise<number | null> {
    r.live = false;
    r.child.kill(sig);
    return r.exited;
  }

  /** The pids of a replica's child processes (its upstream servers). */
  children(r: SoakReplica): number[] {
    return childPids(r.child.pid!);
  }

  sample(r: SoakReplica): ProcessSample | undefined {
    const pid = r.child.pid!;
    try {
      const rss = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      return { rssMb: Math.round(Number(rss?.[1] ?? 0) / 102.4) / 10, fds: readdirSync(`/proc/${pid}/fd`).length, children: childPids(pid).length };
    } catch {
      return undefined;
    }
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.replicas
        .filter((r) => r.child.exitCode === null && r.child.signalCode === null)
        .map((r) => {
          r.live = false;
          r.child.kill('SIGTERM');
          return Promise.race([r.exited, new Promise((res) => setTimeout(res, 8000))]).then(() => r.child.kill('SIGKILL'));
        }),
    );
    this.redis.resume();
    await this.redis.stop();
  }
}

/** Direct children of a process (from /proc); an empty list when it has none or is gone. */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** One session on the replica: initialize, echo, end. True when the echo came back. */
async function echoes(base: string): Promise<boolean> {
  const post = (body: object, sid?: string) => fetch(new URL('/mcp', base), { method: 'POST', headers: { ...HEADERS, ...(sid ? { 'mcp-session-id': sid } : {}) }, body: JSON.stringify(body) });
  const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'probe', version: '1' } } });
  const sid = init.headers.get('mcp-session-id');
  await init.text();
  if (!sid) return false;
  await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sid)).text();
  const text = await (await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message: 'probe' } } }, sid)).text();
  await fetch(new URL('/mcp', base), { method: 'DELETE', headers: { 'mcp-session-id': sid } }).then((r) => r.text());
  return text.includes('Echo: probe');
}

function configYaml(redisUrl: string): string {
  const upstream = (name: string, sharing: string, pool: string) => `  - name: ${name}
    transport: stdio
    sandbox: none
    command: ${process.execPath}
    args: [${EVERYTHING}, stdio]
    sharing: ${sharing}
    pool: ${pool}
`;
  return `server: { host: 127.0.0.1, port: 0, shutdownGraceMs: 3000 }
metrics: { enabled: false }
store: { redis: { url: "${redisUrl}" } }
upstreams:
${upstream('everything', 'shared', '{ size: 1, warm: 1 }')}${upstream('own', 'per-session', '{ warm: 1, max: 16 }')}endpoints:
  - { path: /mcp, upstreams: [everything] }
  - { path: /own, upstreams: [own] }
`;
}
