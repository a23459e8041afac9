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

  async stop(): Promise<void> {
    this.redis.resume();
    for (const t of this.#tunnels) t.close();
    for (const c of this.#conns) c.disconnect();
    await this.redis.stop();
  }
}
