import { BoundedWarnings } from '../observability/bounded-warnings.js';
import type { Logger } from '../observability/logger.js';
import { idleExpired, USED_AT_STEP, type SessionRecord } from '../session/session-store.js';
import type { RedisSessionStore } from './redis-session-store.js';

export interface HeldSessionsOptions {
  store: RedisSessionStore;
  /** This replica's id: the owner it writes. */
  me: string;
  logger: Logger;
  /** Whether the store still holds what this replica last saw in it (see Heartbeat.intact). */
  intact: () => Promise<boolean>;
  /**
   * Sessions' idle timeout, the heartbeat's period, and when a session held here was last used (see usedAt):
   * what its record's usedAt says, and what a takeover judges by. Absent: records keep the usedAt of their writes.
   */
  idle?: { timeoutMs: number; heartbeatMs: number; lastUse: (id: string) => number | undefined } | undefined;
}

/**
 * The most removals one drain makes, in one round trip: a backlog of thousands (sessions ended while the
 * store was frozen) is worked through by the next beats, not made to hold up the beat that finds it.
 */
export const DRAIN_BATCH = 500;

/** Why a session held here was let go: another replica took it over, or ended it (its record removed). */
export type LostReason = 'taken' | 'ended';

/**
 * The sessions this replica holds, and what it writes of them to the store: their records when they
 * open, change or come back after the store lost them, their renewals, and their ends (removed, or
 * handed over on shutdown). Every write after the first is conditional on this replica owning the
 * session still: another may have taken it over, or ended it, while this one was paused.
 */
export class HeldSessions {
  readonly #o: HeldSessionsOptions;
  /** Told the sessions held here that another replica took over or ended: the gateway ends its copies. */
  onLost: ((ids: string[], why: LostReason) => void) | undefined;
  /** The records of the sessions held here, to write again when the store lost them. */
  readonly #mine = new Map<string, SessionRecord>();
  /** Sessions that ended here while the store could not be told: known gone, removed once it answers (drain). */
  readonly #unremoved = new Set<string>();
  /**
   * Sessions held here whose last change the store refused or left unanswered (at its maxmemory under
   * noeviction, read-only after a failover, frozen): written again after a beat it answered (drain). Only
   * a lost store or a lapsed heartbeat re-publishes, and a renewal only lengthens the stored record: before
   * 2026-12-07 the change was lost, and a replica that took the session over restored it without it.
   */
  readonly #unwritten = new Set<string>();
  /** Record updates still on their way (shutdown waits for the hand-overs). */
  readonly #writes = new Set<Promise<void>>();

  /**
   * Failed record writes, said at a bounded rate: a shutdown with the store away hands every session
   * over at once, and a line each was 10,000 lines for 10,000 sessions.
   */
  readonly #writeWarnings: BoundedWarnings;

  constructor(opts: HeldSessionsOptions) {
    this.#o = opts;
    this.#writeWarnings = new BoundedWarnings(opts.logger, 'session records not updated in redis without a warning each (the store is unreachable); their count');
  }

  /**
   * A session opened here: its record written as this replica's (throws when Redis is unreachable: the
   * caller answers 503), or let go when another replica owns it by now.
   */
  async open(record: SessionRecord): Promise<void> {
    this.#mine.set(record.id, record);
    if (!(await this.#o.store.save(record, this.#o.me))) this.#letGo([record.id], 'taken');
  }

  /**
   * A session taken over here (claimed, then rebuilt): its record written only while it is stored and
   * owned here, as the claim left it. 'ended': removed since the claim (the admin API of a replica that
   * read this one as gone), not brought back; 'taken': another replica owns it by now, or it was released.
   * A record missing from a store that may have lost it since (flushed, restarted empty) is written back,
   * as the re-publish of a lost store does: the session lives on here, and the beat that notices the loss
   * may have re-published before it was held.
   */
  async hold(record: SessionRecord): Promise<'held' | 'ended' | 'taken'> {
    const { store, me } = this.#o;
    this.#mine.set(record.id, record); // before the write: an end that comes meanwhile forgets it for good
    let written = await store.update(record, me);
    if (written === 'gone' && !(await this.#o.intact()) && this.#mine.has(record.id)) written = (await store.save(record, me)) ? 'written' : 'taken';
    if (written === 'written') return 'held';
    this.#mine.delete(record.id);
    return written === 'taken' ? 'taken' : 'ended';
  }

  /**
   * A session held here changed (subscriptions, log level, working set): its record is written only
   * while the store has it and it is owned here. A write that arrives after the session ended (a request
   * in flight at its DELETE, a copy paused while another replica ended it) must not bring it back.
   */
  async record(record: SessionRecord): Promise<void> {
    if (!this.#mine.has(record.id)) return; // ended here, or let go
    this.#mine.set(record.id, record);
    let written: 'written' | 'taken' | 'gone';
    try {
      written = await this.#o.store.update(record, this.#o.me);
    } catch (err) {
      this.#unwritten.add(record.id);
      throw err;
    }
    // Taken, or gone: nothing to write again either way. A later change that failed is added back by its own call.
    if (this.#mine.get(record.id) === record) this.#unwritten.delete(record.id);
    if (written === 'taken') this.#letGo([record.id], 'taken');
    // Gone from a store that still holds what this replica saw in it: removed or expired, not lost (then re-published).
    else if (written === 'gone' && this.#mine.has(record.id) && (await this.#o.intact())) this.#letGo([record.id], 'ended');
  }

  #letGo(ids: string[], why: LostReason): void {
    const whose = why === 'taken' ? 'are owned by another replica by now' : 'were ended elsewhere';
    this.#o.logger.warn({ sessions: ids.length }, `sessions held here ${whose}: ending the copies here`);
    for (const id of ids) {
      this.#mine.delete(id);
      this.#unwritten.delete(id);
    }
    this.onLost?.(ids, why);
  }

  /**
   * Renews the records of the sessions held here (requests do not: they would pay a write each), and lets
   * go those another replica owns by now. A takeover can come after every write that would tell this replica
   * (a replica found gone while its links were down a moment re-publishes on reconnecting, and the replica that
   * found it may claim a session just after): before 2026-12-07 the renewal was unconditional and such a
   * copy lived on here beside the new owner's, both serving the session, until a change of its record.
   */
  keep(): void {
    if (this.#mine.size === 0) return;
    this.#o.store.keep([...this.#mine.keys()], this.#o.me).then(
      (taken) => {
        const still = taken.filter((id) => this.#mine.has(id));
        if (still.length > 0) this.#letGo(still, 'taken');
      },
      () => {}, // the store away: renewed on the next round, re-published when it comes back
    );
  }

  /** Ended here and not yet removed from the store (it was away): known gone without asking it. */
  knownGone(id: string): boolean {
    return this.#unremoved.has(id);
  }

  /** A local session ended: forgotten for good, or (shutdown) handed over for another replica to claim. */
  ended(id: string, handOver: boolean): Promise<void> {
    this.#mine.delete(id);
    this.#unwritten.delete(id);
    const { store, me } = this.#o;
    // Removed only while owned here: a copy that ended after another replica took the session over leaves its record.
    const write = (handOver ? store.release(id, me) : store.remove(id, me))
      .then(
        () => {},
        (err: Error) => {
          if (!handOver) this.#unremoved.add(id);
          this.#writeWarnings.warn({ err: err.message, session: id }, 'could not update a session record in redis');
        },
      )
      .finally(() => this.#writes.delete(write));
    this.#writes.add(write);
    return write;
  }

  /**
   * Writes again the records of the sessions held here; resolves to how many were written. `lost`: the
   * store may have lost them, so they are put back. Else only this replica's heartbeat lapsed (it was
   * paused): a record missing from the store was removed meanwhile (the admin API, seeing this replica
   * gone, ended the session) or expired, and is not brought back.
   */
  async republish(lost: boolean): Promise<number> {
    const records = [...this.#mine.values()];
    const { taken, gone } = await this.#o.store.republish(records, this.#o.me, lost);
    this.#written(records);
    // Claimed by another replica while this one could not beat: that one serves it from now on.
    if (taken.length > 0) this.#letGo(taken, 'taken');
    if (gone.length > 0) this.#letGo(gone, 'ended');
    return records.length - taken.length - gone.length;
  }

  /**
   * After a beat the store answered: writes again the records whose last change it did not take, and those
   * of sessions used a step since their usedAt (#noteUse, #rewrite), then removes the records of the
   * sessions that ended here while the store could not be told. For removals, a re-publish is not enough: a store frozen for less than a heartbeat's TTL brings none,
   * and such sessions stayed known gone for the life of the process. Each is forgotten once removed (or
   * owned by another replica by now): until then it is answered 404 without asking the store. At most
   * DRAIN_BATCH a beat, in one pipeline: one round trip each, all at once, held the heartbeat's next beats
   * (the beat awaits this) for as many round trips as sessions. Throws when a removal failed (after
   * forgetting those that did not), as a beat that failed does.
   */
  async drain(): Promise<void> {
    this.#noteUse();
    if (this.#unwritten.size > 0) await this.#rewrite();
    if (this.#unremoved.size === 0) return;
    const ids: string[] = [];
    for (const id of this.#unremoved) if (ids.push(id) === DRAIN_BATCH) break;
    const { done, failed } = await this.#o.store.removeAll(ids, this.#o.me);
    for (const id of done) this.#unremoved.delete(id);
    if (failed) throw failed;
  }

  /**
   * The records of sessions used since their usedAt by a step (USED_AT_STEP of the idle timeout) or more,
   * with the use, marked to write (#unwritten: this drain writes them, with the heartbeat). So a session's
   * record is written at most once a step for its use, however many requests it carries, and a busy one
   * (a stream open for hours) reads as used: a takeover tells either from one idle past its timeout.
   */
  #noteUse(): void {
    const idle = this.#o.idle;
    if (!idle) return;
    const step = idle.timeoutMs * USED_AT_STEP;
    for (const [id, r] of this.#mine) {
      if (!r.movable) continue; // never taken over: its use is no other replica's to judge
      const used = idle.lastUse(id);
      if (used === undefined || used < (r.usedAt ?? 0) + step) continue;
      this.#mine.set(id, { ...r, usedAt: used });
      this.#unwritten.add(id);
    }
  }

  /**
   * Whether the session of `record`, whose owner `owner` is gone ('' released), is not to be taken over: its
   * record says it was idle past its idle timeout (idleExpired), so it ended on that owner's clock, before its
   * sweeper could run. Its record is removed (while `owner` still owns it), and the request is answered as for
   * any ended session. Before 2026-12-07 the idle timeout lived only in its owner's memory, and such a session
   * came back on another replica for up to sessionTtlMs after its record's last renewal.
   */
  async expired(record: SessionRecord, owner: string): Promise<boolean> {
    const idle = this.#o.idle;
    if (!idle || !idleExpired(record, idle.timeoutMs, idle.heartbeatMs)) return false;
    const idleMs = Date.now() - record.usedAt!;
    this.#o.logger.info({ session: record.id, owner: owner || null, idleMs }, 'session not taken over: idle past session.idleTimeoutMs by its record (its replica is gone); answered as ended');
    await this.#o.store.remove(record.id, owner);
    return true;
  }

  /**
   * Writes again, in one pipeline, at most DRAIN_BATCH of the records whose last change did not reach the
   * store (see #unwritten): only while stored and owned here, as any change. Throws when the store failed.
   */
  async #rewrite(): Promise<void> {
    const records: SessionRecord[] = [];
    for (const id of this.#unwritten) {
      const r = this.#mine.get(id);
      if (!r) this.#unwritten.delete(id);
      else if (records.push(r) === DRAIN_BATCH) break;
    }
    if (records.length === 0) return;
    const { taken, gone } = await this.#o.store.republish(records, this.#o.me, false);
    this.#written(records);
    if (taken.length > 0) this.#letGo(taken, 'taken');
    // Gone from a store that still holds what this replica saw in it: removed or expired (as in record).
    const ended = gone.filter((id) => this.#mine.has(id));
    if (ended.length > 0 && (await this.#o.intact())) this.#letGo(ended, 'ended');
  }

  /** `records` reached the store: no longer to write again, unless the session changed since (that change's call says). */
  #written(records: readonly SessionRecord[]): void {
    for (const r of records) if (this.#mine.get(r.id) === r) this.#unwritten.delete(r.id);
  }

  /** The hand-overs and removals still on their way (shutdown waits for them). */
  async settled(): Promise<void> {
    await Promise.all(this.#writes);
    this.#writeWarnings.close(); // the count of the unsaid, now: the process may exit before its timer
  }
}
