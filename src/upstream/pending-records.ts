import { GatewayError } from '../errors.js';

/** Most records held at once: a flood of consent links cannot grow the gateway's memory without bound. */
const MAX_RECORDS = 100_000;
/** Most records one principal has pending at once (consent links not yet opened, sign-ins under way). */
export const PENDING_PER_USER = 32;

interface PendingRecord {
  value: string;
  expiresAt: number;
  owner: string;
}

/**
 * The single-use records of consent flows (flows and OAuth states) in memory, each its principal's,
 * bounded so that no principal pushes out another's. The bound used to drop the oldest record, whoever's
 * it was, so a user whose calls asked for consent without end evicted every other user's pending link.
 * Now expired records go first; a principal with PENDING_PER_USER pending is refused their next
 * (SWB_RATE_LIMITED, saying when the first of theirs expires); and a store full of live records refuses
 * a new one rather than drop a pending one.
 */
export class PendingRecords {
  /** In the order put: the records share one TTL (ConsentFlows.ttlMs), so the oldest expire first. */
  readonly #records = new Map<string, PendingRecord>();
  readonly #byOwner = new Map<string, Set<string>>();
  readonly #max: number;
  readonly #perUser: number;

  constructor(o: { max?: number | undefined; perUser?: number | undefined } = {}) {
    this.#max = o.max ?? MAX_RECORDS;
    this.#perUser = o.perUser ?? PENDING_PER_USER;
  }

  put(key: string, value: string, ttlMs: number, owner: string): void {
    const now = Date.now();
    for (const [k, r] of this.#records) {
      if (r.expiresAt > now) break;
      this.#remove(k);
    }
    // Checked one by one too: a record put with a shorter TTL may have expired behind a longer-lived one.
    for (const k of this.#byOwner.get(owner) ?? []) if (this.#records.get(k)!.expiresAt <= now) this.#remove(k);
    const mine = this.#byOwner.get(owner);
    if (mine && mine.size >= this.#perUser) throw this.#tooMany(mine, now);
    if (this.#records.size >= this.#max) throw new Error(`the gateway holds its maximum of ${this.#max} pending consent records`);
    this.#remove(key);
    this.#records.set(key, { value, expiresAt: now + ttlMs, owner });
    const set = this.#byOwner.get(owner);
    if (set) set.add(key);
    else this.#byOwner.set(owner, new Set([key]));
  }

  /** The record's value, once (removed at once), if it has not expired. */
  take(key: string): string | undefined {
    const r = this.#records.get(key);
    if (!r) return undefined;
    this.#remove(key);
    return r.expiresAt > Date.now() ? r.value : undefined;
  }

  /** The record's value, left in place, if it has not expired. */
  peek(key: string): string | undefined {
    const r = this.#records.get(key);
    return r && r.expiresAt > Date.now() ? r.value : undefined;
  }

  get size(): number {
    return this.#records.size;
  }

  #remove(key: string): void {
    const r = this.#records.get(key);
    if (!r) return;
    this.#records.delete(key);
    const mine = this.#byOwner.get(r.owner);
    mine?.delete(key);
    if (mine?.size === 0) this.#byOwner.delete(r.owner);
  }

  #tooMany(mine: Set<string>, now: number): GatewayError {
    let first = Infinity;
    for (const k of mine) first = Math.min(first, this.#records.get(k)!.expiresAt);
    return tooManyPending(this.#perUser, first - now);
  }

  toJSON(): Record<string, number> {
    return { records: this.#records.size, users: this.#byOwner.size };
  }
}

/** A principal's refusal at their cap (memory and Redis alike), `firstInMs` until the first of theirs expires. */
export function tooManyPending(perUser: number, firstInMs: number): GatewayError {
  const seconds = Math.max(1, Math.ceil(firstInMs / 1000));
  return new GatewayError(
    'SWB_RATE_LIMITED',
    `you have ${perUser} consent links pending (not yet opened, or their sign-in not completed), the most the gateway keeps for one user: open one of the links you were given, or retry in ${seconds} s, when the first of them expires`,
    // Only the user ends it (awaitsUser): an instance that failed to start for it waits for their next request.
    { retryAfterSeconds: seconds, awaitsConsent: true },
  );
}
