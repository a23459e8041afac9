// Gateway processes sharing sessions through Redis (replicas), fronting server-everything over stdio:
// their config, starting one, several or a pair with the admin API on, a fetch that rotates among
// them, and their heartbeats.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before } from 'node:test';
import { Redis } from 'ioredis';
import { listeningAddress } from './processes.js';
import { startRedis, type TestRedis } from './redis.js';

export interface Replica {
  name: string;
  base: string;
  child: ChildProcess;
  exited: Promise<number | null>;
  /** The admin API's URL, when the replica's config enables it (read from its log). */
  admin?: string | undefined;
}

/**
 * Writes the config file of a gateway process fronting server-everything over stdio on a free loopback
 * port, and returns its path. `store`: the store line's value; `upstreamYaml`: more lines for the
 * upstream; `extraYaml`: more top-level lines.
 */
export function writeEverythingConfig(name: string, o: { store?: string; upstreamYaml?: string; extraYaml?: string } = {}): string {
  const dir = mkdtempSync(join(tmpdir(), `swb-${name}-`));
  const file = join(dir, 'config.yaml');
  writeFileSync(
    file,
    `server: { host: 127.0.0.1, port: 0, shutdownGraceMs: 5000 }
metrics: { enabled: false }
${o.store ? `store: ${o.store}\n` : ''}upstreams:
  - name: everything
    transport: stdio
    sandbox: none
    command: ${process.execPath}
    args: [${resolve('node_modules/@modelcontextprotocol/server-everything/dist/index.js')}, stdio]
${o.upstreamYaml ?? ''}endpoints: [{ path: /mcp, upstreams: [everything] }]
${o.extraYaml ?? ''}`,
  );
  return file;
}

/** How a test replica beats: fast by default (a dead owner's heartbeat lapses in 1 s); `defaults` as shipped (1 s / 5 s). */
export type Beat = 'fast' | 'defaults';

/** A gateway process sharing sessions through Redis, fronting server-everything over stdio. */
export async function startReplica(name: string, redisUrl: string, sharing: 'shared' | 'per-tenant' | 'per-session' = 'shared', extraYaml = '', beat: Beat = 'fast'): Promise<Replica> {
  const timing = beat === 'fast' ? ', heartbeatMs: 200, replicaTtlMs: 1000' : '';
  const file = writeEverythingConfig(name, {
    store: `{ redis: { url: "${redisUrl}"${timing} } }`,
    upstreamYaml: `    sharing: ${sharing}\n    pool: { size: 1, warm: 1 }\n`,
    extraYaml,
  });
  return startReplicaFrom(name, file);
}

/**
 * How long a replica may take to listen. Alone it takes about 4 s (3 s of it loading modules through tsx);
 * a suite starts two or three at once, each with its server-everything, beside the runner's other file on
 * two shared cores: 11 s at a load average of 15, and past 30 s (the former limit) twice under heavier
 * load, with nothing wrong. A replica that exits (a bad config, a port taken, a crash) fails at once
 * whatever this says; only one that hangs silently waits it out, and its log and the load are reported.
 */
const REPLICA_START_MS = 90_000;

/** A gateway process started from the config file `file` (see startReplica). */
export async function startReplicaFrom(name: string, file: string, nodeArgs: string[] = []): Promise<Replica> {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'src/main.ts', 'serve', '--config', file], {
    env: { ...process.env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
  // The admin listener starts before the MCP one: its line is in the log by the time `base` is.
  let log = '';
  const adminLine = (b: Buffer) => (log += b.toString());
  child.stdout!.on('data', adminLine);
  let base: string;
  try {
    base = await listeningAddress(child, REPLICA_START_MS);
  } catch (err) {
    // A replica that did not come up must not outlive the test file (its pipe would hold the runner open).
    child.kill('SIGKILL');
    throw err;
  }
  child.stdout!.off('data', adminLine);
  const admin = /"admin":"(http:\/\/[^"]+)"/.exec(log)?.[1];
  if (process.env.REPLICA_LOG) child.stdout!.on('data', (b: Buffer) => process.stderr.write(`[${name}] ${b}`));
  else child.stdout!.resume();
  return { name, base, child, exited, admin };
}

/**
 * Starts several replicas at once. If one fails to start, the ones that did are killed before the error
 * is thrown: a suite's `before` assigns nothing when it throws, so its `after` could not stop them, and
 * the test file would wait on their pipes until the runner's timeout.
 */
export async function startReplicas<R extends Replica>(starts: readonly Promise<R>[]): Promise<R[]> {
  const settled = await Promise.allSettled(starts);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (!failed) return settled.map((s) => (s as PromiseFulfilledResult<R>).value);
  for (const s of settled) if (s.status === 'fulfilled') s.value.child.kill('SIGKILL');
  throw failed.reason;
}

/**
 * For a describe: a redis-server of its own and two replicas on it, `a` and `b` (a shared upstream), with
 * the admin API on and `token` as its bearer token. Started before the describe's tests (the fields are
 * set then) and killed after them.
 */
export function adminReplicaPair(token: string): { redis: TestRedis; a: Replica; b: Replica } {
  const pair = {} as { redis: TestRedis; a: Replica; b: Replica };
  before(async () => {
    pair.redis = await startRedis();
    [pair.a, pair.b] = await startReplicas(['a', 'b'].map((n) => startReplica(n, pair.redis.url, 'shared', `admin: { enabled: true, port: 0, token: "${token}" }\n`)));
  });
  after(async () => {
    for (const r of [pair.a, pair.b]) r?.child.kill('SIGKILL');
    await pair.redis?.stop();
  });
  return pair;
}

/**
 * A fetch that sends each request to the next live replica in turn (a client-side load balancer):
 * consecutive requests of one session land on different replicas, and a dead replica is skipped.
 */
export function rotatingFetch(replicas: () => Replica[]): (url: string | URL | Request, init?: RequestInit) => Promise<Response> {
  let i = 0;
  return async (url, init) => {
    const u = new URL(url instanceof Request ? url.url : url);
    let lastErr: unknown;
    for (let attempt = 0; attempt < 6; attempt++) {
      const live = replicas();
      const target = new URL(live[i++ % live.length]!.base);
      u.host = target.host;
      try {
        return await fetch(u, init);
      } catch (err) {
        lastErr = err;
        if ((init?.signal as AbortSignal | undefined)?.aborted) throw err;
      }
    }
    throw lastErr;
  };
}

/** How many replicas have a live heartbeat in Redis (default key prefix): a dead one drops out at its TTL. */
export async function heartbeats(redisUrl: string): Promise<number> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    return (await redis.keys('swb:replica:*')).length;
  } finally {
    redis.disconnect();
  }
}
