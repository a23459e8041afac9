/** How many believed forwards one replica remembers at most (see SeenForwards). */
const DEFAULT_MAX = 100_000;
/** How often, at most, a full memory is swept whole for entries expired behind a younger first one. */
const SWEEP_MS = 1_000;

/** What became of a signature offered to the memory. */
export type Seen = 'first' | 'replayed' | 'full';

/**
 * The MACs of the forwards this replica believed, each until its signature's time leaves the skew
 * window (after which the signature is refused as expired anyway), so that a signed forward is believed
 * once: the same header and body sent again by whoever saw them pass between replicas is a replay.
 *
 * Only signatures that verified (made with the group's secret, for this replica) are offered, so only
 * the group fills it: a forger cannot. Bounded all the same: past `max` live entries a new forward is
 * 'full', and the caller refuses to believe it (fails closed: it is then an ordinary client request,
 * served and charged as one) rather than forget live entries and let their replays through. 100 000
 * entries hold some 3 000 forwards a second for the 30 s window, in some 20 MB.
 *
 * A Map in insertion order: entries are dropped from its front while expired, O(1) a forward. Signers'
 * clocks differ (±30 s), so an entry may expire behind a younger first one; it is then kept until that
 * one goes (at most a window longer), or swept when the memory is full.
 */
export class SeenForwards {
  readonly #max: number;
  /** MAC (hex) → when its signature's time leaves the window (unix ms). */
  readonly #expiry = new Map<string, number>();
  /** The first entry's expiry (Infinity when empty): most forwards find nothing to drop without iterating. */
  #front = Infinity;
  #sweptAt = 0;

  constructor(max = DEFAULT_MAX) {
    this.#max = max;
  }

  /** Records `mac`, believable until `expiresAt`, unless it is recorded already or there is no room. */
  first(mac: string, expiresAt: number, now: number): Seen {
    this.#dropExpired(now);
    if (this.#expiry.has(mac)) return 'replayed';
    if (this.#expiry.size >= this.#max && !this.#sweep(now)) return 'full';
    this.#expiry.set(mac, expiresAt);
    if (this.#expiry.size === 1) this.#front = expiresAt;
    return 'first';
  }

  get size(): number {
    return this.#expiry.size;
  }

  #dropExpired(now: number): void {
    if (this.#front >= now) return;
    this.#front = Infinity;
    for (const [mac, expiresAt] of this.#expiry) {
      if (expiresAt >= now) {
        this.#front = expiresAt;
        return;
      }
      this.#expiry.delete(mac);
    }
  }

  /** Whether a sweep of the whole memory made room (tried at most once a second: it is O(max)). */
  #sweep(now: number): boolean {
    if (now - this.#sweptAt < SWEEP_MS && now >= this.#sweptAt) return false;
    this.#sweptAt = now;
    this.#front = Infinity;
    for (const [mac, expiresAt] of this.#expiry) {
      if (expiresAt < now) this.#expiry.delete(mac);
      else if (this.#front === Infinity) this.#front = expiresAt;
    }
    return this.#expiry.size < this.#max;
  }
}
