import type { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.js';

/** Up to this many replicas are remembered as gone at once. */
const REMEMBERED = 1024;

/**
 * Whether replicas are gone, from evidence Redis already has instead of a heartbeat left to lapse: a
 * replica's inbox has no subscriber, and no Redis connection carries its name (CLIENT LIST). A process
 * killed outright loses both at once — its sockets are closed by the kernel — while its heartbeat key
 * lives on for `replicaTtlMs`. A replica whose Redis link merely blipped has lost them too, so the caller
 * only asks once its own view of the store is settled (see StoreHealth), as for an expired heartbeat.
 *
 * Where CLIENT LIST is not allowed (a managed Redis's ACL), the inbox's subscriber alone is the evidence:
 * the subscription lives on a connection of its own that only closes with the process or its link.
 */
export class ReplicaDeaths {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #logger: Logger;
  /**
   * Replicas found gone, until when the finding is believed. Not for ever: a replica whose two links
   * dropped at once (a network blip, CLIENT KILL) looks exactly like a dead one while it reconnects, and
   * remembered for ever it would stay dead to this replica, which would take over its sessions (new ones
   * too) on their next request. A dead replica's heartbeat has lapsed by the time the finding is forgotten.
   */
  readonly #dead = new Map<string, number>();
  readonly #believedMs: number;
  #clientList = true;

  /** `believedMs`: how long a finding stands (at least the heartbeat's TTL: until a dead replica's key is gone too). */
  constructor(redis: Redis, prefix: string, logger: Logger, believedMs: number) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#logger = logger;
    this.#believedMs = believedMs;
  }

  /**
   * The name both of a replica's connections carry (CLIENT SETNAME), so CLIENT LIST shows it alive. Redis
   * refuses a name with a character outside '!'..'~', and ioredis connects without it in silence: such
   * characters of the key prefix (spaces, letters beyond ASCII) are written '_'.
   */
  static connectionName(prefix: string, replica: string): string {
    return `${prefix}replica:${replica}`.replace(/[^!-~]/gu, '_');
  }

  /** The channel a replica receives forwarded requests on. */
  static inbox(prefix: string, replica: string): string {
    return `${prefix}inbox:${replica}`;
  }

  /** Which of `replicas` are gone. Throws when Redis cannot be asked (the caller then assumes nothing). */
  async gone(replicas: readonly string[]): Promise<Set<string>> {
    const found = new Set(replicas.filter((r) => this.knownGone(r)));
    const open = [...new Set(replicas.filter((r) => !found.has(r)))];
    if (open.length === 0) return found;
    const counts = (await this.#redis.pubsub('NUMSUB', ...open.map((r) => ReplicaDeaths.inbox(this.#prefix, r)))) as (string | number)[];
    const silent = open.filter((_, i) => Number(counts[2 * i + 1]) === 0);
    if (silent.length === 0) return found;
    const names = await this.#connectionNames();
    for (const r of silent) {
      if (names?.has(ReplicaDeaths.connectionName(this.#prefix, r))) continue;
      this.#remember(r);
      found.add(r);
    }
    return found;
  }

  /** Whether `replica` is known gone without asking Redis. */
  knownGone(replica: string): boolean {
    const until = this.#dead.get(replica);
    if (until === undefined) return false;
    if (Date.now() < until) return true;
    this.#dead.delete(replica);
    return false;
  }

  #remember(replica: string): void {
    if (this.#dead.size >= REMEMBERED) this.#dead.delete(this.#dead.keys().next().value!);
    this.#dead.set(replica, Date.now() + this.#believedMs);
    this.#logger.warn({ replica }, 'a replica is gone (its Redis connections closed): its sessions are taken over on their next request');
  }

  /** The names of the connections Redis has now, or undefined when CLIENT LIST is not allowed. */
  async #connectionNames(): Promise<Set<string> | undefined> {
    if (!this.#clientList) return undefined;
    let list: string;
    try {
      list = String(await this.#redis.client('LIST'));
    } catch (err) {
      if (!/NOPERM|unknown command|ERR/i.test((err as Error).message)) throw err;
      this.#clientList = false;
      this.#logger.warn({ err: (err as Error).message }, 'CLIENT LIST is not allowed: a replica counts as gone when its inbox has no subscriber');
      return undefined;
    }
    const names = new Set<string>();
    for (const line of list.split('\n')) {
      const m = / name=(\S+)/.exec(line);
      if (m) names.add(m[1]!);
    }
    return names;
  }
}
