import type { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.js';

/** Up to this many replicas are remembered as gone at once. */
const REMEMBERED = 1024;
/** How much longer a heartbeat key must have left than it would without a write since a finding to prove one (rounding, not time). */
const REWRITE_SLACK_MS = 10;

/** A replica found gone: until when that is believed, and its heartbeat key's time to live then (PTTL) and when it was read. */
interface Finding {
  until: number;
  beatLeftMs: number;
  at: number;
}

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
  readonly #dead = new Map<string, Finding>();
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
      this.#remember(r, await this.#redis.pttl(this.#beatKey(r)));
      found.add(r);
    }
    return found;
  }

  /** Whether `replica` is known gone without asking Redis. */
  knownGone(replica: string): boolean {
    const f = this.#dead.get(replica);
    if (f === undefined) return false;
    if (Date.now() < f.until) return true;
    this.#dead.delete(replica);
    return false;
  }

  /**
   * Whether a replica known gone has written its heartbeat since it was found so (then it is forgotten as
   * gone): its links had only dropped for a moment. A dead process writes nothing, so its key's time to live
   * only runs down; one written again has more left than the finding's, less the time since. Believed
   * gone until the finding's time is over, a replica back after a blip had every session of its own (new
   * ones too) taken over on their next request by the replica that found it gone, while it served them
   * still: its re-publish after the reconnect came before, so it never learnt of two copies.
   */
  async back(replica: string): Promise<boolean> {
    const f = this.#dead.get(replica);
    if (f === undefined) return true;
    const now = Date.now(); // before the PTTL is read: the time since the finding can only be under-counted
    const left = await this.#redis.pttl(this.#beatKey(replica));
    if (left < 0 || (f.beatLeftMs >= 0 && left <= f.beatLeftMs - (now - f.at) + REWRITE_SLACK_MS)) return false;
    this.#dead.delete(replica);
    this.#logger.warn({ replica }, 'a replica found gone is back (it wrote its heartbeat since): its sessions are forwarded to it again');
    return true;
  }

  #beatKey(replica: string): string {
    return `${this.#prefix}replica:${replica}`;
  }

  /** `beatLeftMs`: its heartbeat key's PTTL when found gone (negative: none). */
  #remember(replica: string, beatLeftMs: number): void {
    if (this.#dead.size >= REMEMBERED) this.#dead.delete(this.#dead.keys().next().value!);
    const at = Date.now();
    this.#dead.set(replica, { until: at + this.#believedMs, beatLeftMs, at });
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
