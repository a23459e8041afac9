import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { Redis, type RedisOptions } from 'ioredis';
import { Tunnel, type TunnelOptions } from '../../src/cluster/tunnel.js';
import { createLogger } from '../../src/observability/logger.js';
import { startRedis, type TestRedis } from './redis.js';

/** What a test chooses of one replica's tunnel: how its owner side answers, and its connections. */
export interface TestTunnelOptions {
  dispatch: TunnelOptions['dispatch'];
  /** The publishing connection's options (a test that times out or re-sends its commands). */
  pub?: RedisOptions;
  malformed?: () => void;
  maxBufferBytes?: number;
}

/**
 * Tunnels of replicas that share one test Redis, each on its two connections of its own (no gateway
 * around them: the tests drive the tunnel itself), all closed by stop(). No replica is ever gone.
 */
export class TestTunnels {
  readonly redis: TestRedis;
  readonly #prefix: string;
  readonly #conns: Redis[] = [];
  readonly #tunnels: Tunnel[] = [];

  private constructor(redis: TestRedis, prefix: string) {
    this.redis = redis;
    this.#prefix = prefix;
  }

  static async start(prefix: string): Promise<TestTunnels> {
    return new TestTunnels(await startRedis(), prefix);
  }

  /** A connection to the test Redis, closed by stop(). */
  connection(options: RedisOptions = {}): Redis {
    const c = new Redis(this.redis.url, options);
    this.#conns.push(c);
    return c;
  }

  /** Replica `me`'s tunnel (not started), and its two connections. */
  open(me: string, o: TestTunnelOptions): { t: Tunnel; pub: Redis; sub: Redis } {
    const [pub, sub] = [this.connection(o.pub), this.connection()];
    const t = new Tunnel({ pub, sub, prefix: this.#prefix, me, logger: createLogger('silent'), dispatch: o.dispatch, gone: async () => new Set(), malformed: o.malformed ?? (() => {}), maxBufferBytes: o.maxBufferBytes ?? 65536 });
    this.#tunnels.push(t);
    return { t, pub, sub };
  }

  /**
   * Every connection opened so far is ready. Tunnel.start() waits for its subscription only, and a forward
   * refuses while its command connection is still connecting (a loaded machine takes a while): a test that
   * forwards, or pauses a connection's socket, waits for this first.
   */
  async ready(): Promise<void> {
    await Promise.all(this.#conns.map((c) => (c.status === 'ready' ? undefined : once(c, 'ready'))));
  }

  async stop(): Promise<void> {
    this.redis.resume();
    for (const t of this.#tunnels) t.close();
    for (const c of this.#conns) c.disconnect();
    await this.redis.stop();
  }
}

/**
 * An owner's dispatch that takes each request and answers nothing until it is told to stop (a slow
 * tools/call under responseMode json): what it took goes into `runs`, the abort signal by path.
 */
export function heldRuns(runs: Map<string, AbortSignal>): TunnelOptions['dispatch'] {
  return (r, signal) => {
    runs.set(r.url, signal);
    return new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true }));
  };
}

/** What the relay server posts by path: a tools/call (not harmless twice) and a tools/list (harmless). */
const BODIES: Record<string, string> = {
  '/call': JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', arguments: {} } }),
  '/list': JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
};

/** A loopback server whose POSTs to /call and /list `relay` forwards to `owner` (alive, 60 s), and its port. */
export async function relayServer(relay: Tunnel, owner: string): Promise<{ server: Server; port: number }> {
  const server = createServer((req, r) => {
    void relay.forward(owner, { method: 'POST', url: req.url!, headers: { 'content-type': 'application/json' }, body: BODIES[req.url!] }, () => r, 60_000, async () => true);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as { port: number }).port };
}
