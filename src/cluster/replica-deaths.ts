import type { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.js';

/** Replica ids are random per process, so a dead one never comes back: remembered, up to this many. */
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
  readonly #dead = new Set<string>();
  #clientList = true;

  constructor(redis: Redis, prefix: string, logger: Logger) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#logger = logger;
  }

  /** The name both of a replica's connections carry (CLIENT SETNAME), so CLIENT LIST shows it alive. */
  static connectionName(prefix: string, replica: string): string {
    return `${prefix}replica:${replica}`.replace(/\s/g, '_');
  }

  /** The channel a replica receives forwarded requests on. */
  static inbox(prefix: string, replica: string): string {
    return `${prefix}inbox:${replica}`;
  }

  /** Which of `replicas` are gone. Throws when Redis cannot be asked (the caller then assumes nothing). */
  async gone(replicas: readonly string[]): Promise<Set<string>> {
    const found = new Set(replicas.filter((r) => this.#dead.has(r)));
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
    return this.#dead.has(replica);
  }

  #remember(replica: string): void {
    if (this.#dead.size >= REMEMBERED) this.#dead.delete(this.#dead.values().next().value!);
    this.#dead.add(replica);
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
