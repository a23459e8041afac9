import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.js';
import { forwardSecretKey } from './forward-signature.js';
import type { StoreHealth } from './store-health.js';

// One round trip per beat: this replica's liveness key (its value: the URL it takes forwards at, or a
// timestamp until it listens — and from versions before forwarding over HTTP), then the store's marker (created when absent).
// The marker only changes when the store lost its data (a restart without persistence, a flush, a
// fail-over to an empty replica), or when no replica beat for its whole lifetime (ARGV[4], renewed by
// every beat): then every session record it vouched for has expired too. Without a TTL, the marker of a
// key prefix no replica uses any more stayed for ever.
// Also answered: whether this replica's key had lapsed (a process paused past its TTL, whose sessions
// other replicas may have taken over meanwhile). The forward secret kept in Redis (KEYS[3], when there is
// one) lives as long as the marker, for the same reason: without a TTL, a key prefix no replica uses kept it for ever.
const BEAT = `
local lapsed = redis.call('EXISTS', KEYS[1]) == 0 and 1 or 0
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local m = redis.call('GET', KEYS[2])
if not m then
  m = ARGV[3]
  redis.call('SET', KEYS[2], m, 'PX', ARGV[4])
else
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
end
redis.call('PEXPIRE', KEYS[3], ARGV[4])
return {m, lapsed}`;

export interface HeartbeatOptions {
  prefix: string;
  replicaId: string;
  everyMs: number;
  ttlMs: number;
  /**
   * How long the store's marker outlives the last beat of any replica: longer than a session record's TTL,
   * so that a marker gone by itself cannot make a record still there read as the store's loss.
   */
  markerTtlMs: number;
  health: StoreHealth;
  logger: Logger;
  /**
   * Writes again every record this replica holds; resolves to how many were written. `lost`: the store
   * may have lost them (its marker changed, or the connection was re-made); else only this replica's
   * heartbeat lapsed, and a record missing from the store was removed or expired meanwhile.
   */
  republish: (lost: boolean) => Promise<number>;
  /** After every beat the store answered (and the re-publish it needed): writes that waited for it. */
  answered: () => Promise<void>;
  /** Where other replicas forward to (the heartbeat's value), once this replica listens. */
  url: () => string | undefined;
}

/**
 * This replica's heartbeat, and the watch for a store that came back without what this replica put in
 * it. After a reconnect, or when the store's marker changes, the replica is `stale` until it has
 * re-published its sessions — its heartbeat first (the same beat), so a record never reappears with an
 * owner that looks dead and gets taken over. A failed re-publish is retried on the next beat.
 */
export class Heartbeat {
  readonly #redis: Redis;
  readonly #o: HeartbeatOptions;
  #timer: NodeJS.Timeout | undefined;
  #marker: string | undefined;
  #stale = false;
  /** The store may have lost this replica's records since it last wrote them (not just its heartbeat lapsing). */
  #lost = false;
  #busy = false;
  #again = false;
  /**
   * The last beat went unanswered (a frozen store, or a partition that leaves the connection open: no
   * reset comes, so the connection is not re-made for the minutes TCP takes to give up). Every new
   * session is refused meanwhile (its record cannot be written), so the replica must not say it is ready.
   */
  #unanswered = false;
  /** Warned that the store leaves beats unanswered or refuses them (said once an outage, with its end). */
  #saidFailed = false;

  constructor(redis: Redis, opts: HeartbeatOptions) {
    this.#redis = redis;
    this.#o = opts;
  }

  #key(): string {
    return `${this.#o.prefix}replica:${this.#o.replicaId}`;
  }

  /** True from a reconnect (or a lost store) until this replica's sessions are back in the store. */
  get stale(): boolean {
    return this.#stale;
  }

  /** True from a beat the store did not answer until one it answers. */
  get unanswered(): boolean {
    return this.#unanswered;
  }

  async start(): Promise<void> {
    await this.#beat();
    this.#timer = setInterval(() => void this.#beat(), this.#o.everyMs);
    this.#timer.unref();
  }

  /** Beats now (the URL to advertise became known). */
  beatNow(): void {
    void this.#beat();
  }

  /** The connection came back: the store may have lost everything while it was away. */
  reconnected(): void {
    this.#o.health.trouble();
    this.#stale = true;
    this.#lost = true;
    void this.#beat();
  }

  /**
   * Whether the store still holds what this replica last saw in it (its marker is unchanged): checked
   * before an absent record is believed, since a flushed store answers "absent" for everything until the
   * next beat notices. A changed marker starts that beat now.
   */
  async intact(): Promise<boolean> {
    const marker = await this.#redis.get(`${this.#o.prefix}store-marker`);
    if (marker !== null && marker === this.#marker) return true;
    this.#o.health.trouble();
    void this.#beat();
    return false;
  }

  async #beat(): Promise<void> {
    if (this.#busy) {
      this.#again = true;
      return;
    }
    this.#busy = true;
    try {
      let beat: [string, number];
      try {
        beat = (await this.#redis.eval(BEAT, 3, this.#key(), `${this.#o.prefix}store-marker`, forwardSecretKey(this.#o.prefix), this.#o.url() ?? String(Date.now()), this.#o.ttlMs, randomUUID(), this.#o.markerTtlMs)) as [string, number];
      } catch (err) {
        this.#unanswered = true;
        this.#sayFailed(err as Error);
        throw err;
      }
      this.#unanswered = false;
      if (this.#saidFailed) this.#o.logger.info('redis answers again: the heartbeat is written');
      this.#saidFailed = false;
      const [answer, lapsed] = beat;
      const marker = String(answer);
      // A changed marker: the store lost its data (the first beat only learns the marker).
      if (this.#marker !== undefined && marker !== this.#marker) {
        if (!this.#stale) {
          this.#o.logger.warn('the session store lost its data: re-publishing the sessions this replica holds');
          this.#o.health.trouble();
        }
        this.#stale = true;
        this.#lost = true;
      } else if (this.#marker !== undefined && Number(lapsed) === 1 && !this.#stale) {
        // Seen dead while it could not beat: re-publishing finds the sessions taken over meanwhile.
        this.#o.logger.warn('this replica\'s heartbeat had lapsed: checking which sessions it still holds');
        this.#stale = true;
      }
      if (this.#stale) {
        const n = await this.#o.republish(this.#lost);
        this.#stale = false;
        this.#lost = false;
        this.#o.logger.info({ sessions: n }, 'session records re-published');
      }
      this.#marker = marker;
      await this.#o.answered();
    } catch (err) {
      this.#o.health.trouble();
      if (this.#stale) this.#o.logger.debug({ err: (err as Error).message }, 'heartbeat or re-publish failed; retrying on the next beat');
    } finally {
      this.#busy = false;
      if (this.#again) {
        this.#again = false;
        void this.#beat();
      }
    }
  }

  /**
   * A beat that failed with the connection up: timed out (the store answers nothing: frozen, a partition
   * that leaves the connection open) or refused (an error reply: at its maxmemory under noeviction, a
   * read-only replica after a failover, an ACL). ioredis says nothing of either (it says a connection that
   * drops itself), though the replica goes unready and refuses new sessions: said once, with the reason.
   */
  #sayFailed(err: Error): void {
    if (this.#saidFailed) return;
    if (err.message === 'Command timed out') {
      this.#o.logger.warn({ timeoutMs: this.#redis.options.commandTimeout }, 'redis is not answering (a heartbeat went unanswered; the connection is open): this replica is not ready and refuses new sessions until it answers');
    } else if (err.name === 'ReplyError') {
      this.#o.logger.warn({ err: err.message }, 'redis refuses the heartbeat\'s writes: this replica is not ready and refuses new sessions until it takes them');
    } else return;
    this.#saidFailed = true;
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#redis.del(this.#key()).catch(() => {});
  }
}
