import type { RequestId } from './types.js';

const MIN_CAPACITY = 16;
/**
 * A table shrinks only from above this many slots (4 KB of ids and values and less are kept): one shrunk to
 * its floor whenever it fell below a sixteenth full grew again at three quarters, and a session's tables,
 * their requests in flight going between 2 and 13, were rebuilt both ways every few dozen requests (at 64 in
 * flight, ~1 % of a proxied call's instructions, their arrays made anew each time).
 */
const SHRINK_ABOVE = 256;

/** A slot never used is NaN, the one value unequal to itself: probing stops there. */
function emptyKeys(capacity: number): Float64Array {
  return new Float64Array(capacity).fill(Number.NaN);
}

/** Ids kept in the open-addressing table: whole numbers (a stream number may exceed 32 bits). */
function isWhole(id: number): boolean {
  return Math.floor(id) === id && id - id === 0;
}

/** This process's key for mixed slot numbers (see slotOf): a client cannot know which of its ids collide. */
const SEED = (Math.random() * 0x1_0000_0000) | 0;

/**
 * Probes one lookup may take before its table switches to mixed slot numbers. Ids that rise one by one
 * never come near it; ids a client chose to collide (multiples of 2^32, or of the table's size) reach it
 * at once.
 */
const LONG_PROBE = 64;

/**
 * A mixed first slot for a whole-number id: its low and high 32 bits, keyed and scrambled. A table starts
 * with an id's low bits alone (`id & mask`: ids that rise one by one then never collide, the cheapest
 * case and the usual one), and switches to this once a probe runs long. A client picks its request ids:
 * by their low bits alone, ids that are multiples of 2^32 all landed on one slot, so a 2025-03-26 batch
 * of 90,000 of them cost about 4·10^9 probes, holding the event loop for minutes.
 */
function slotOf(id: number, mask: number): number {
  let h = Math.imul((id | 0) ^ SEED, 0x9e3779b1) ^ Math.imul((id / 0x1_0000_0000) | 0, 0x85ebca77);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  return h & mask;
}

/**
 * What is in flight, by request id: the few operations of a Map the request path needs. Whole-number ids
 * (the gateway's own, and nearly every client's) live in an open-addressing table (the ids in a
 * Float64Array, the values in an array), at the slot of their low bits, or of slotOf once a probe ran
 * long; other ids in dictionary objects, numbers apart from strings (`1` and `"1"` are different
 * requests). Values are never undefined.
 *
 * Why not a Map: a V8 Map that outgrows or rehashes its table leaves, in the table it replaced, a link to
 * the new one (for iterators still walking the old) and keeps the old table's entries. A Map that every
 * request adds to and removes from is rehashed every few dozen requests. Once one dead table has reached
 * the old generation (a burst, or a scavenge at the wrong moment), it holds its successor alive through
 * the next scavenge, which promotes it, and that one the next: from then on every table, and every
 * request object its entries point to, is promoted, until a major GC happens to break the chain
 * (measured on one gateway, Node 22, 20,000 calls of 2026-07-28 requests: ~750 kB promoted per scavenge
 * against ~15 kB without; it came and went by process, a bias of its own in every CPU figure). Value arrays
 * replaced here are emptied first, and a dictionary object's old store has no such link: a dead store
 * can keep only its own entries.
 *
 * Robin Hood order with backward-shift deletion: along a run of slots, ids sit in the order of their first
 * slots, so a lookup stops at the first id further from its own first slot than the one sought is, and a
 * delete moves the ids after it back one slot each until one sits at its own first slot (for ids rising one
 * by one, the next slot: one look). No slot is left marked deleted. With such marks (until 2026-12), a table
 * on the request path filled with them every few dozen requests (its ids rise, each answered one left a
 * mark) and was rebuilt: at 64 calls in flight, about 1 % of a proxied call's instructions (callgrind), its
 * arrays made anew each time; and a long run of them left by an answered batch made every later id near it
 * probe through the whole run.
 */
export class RequestTable<V> {
  #keys = emptyKeys(MIN_CAPACITY);
  #values: Array<V | undefined> = new Array(MIN_CAPACITY).fill(undefined);
  #mask = MIN_CAPACITY - 1;
  /** Ids in the whole-number table. */
  #used = 0;
  #size = 0;
  /** Whether slots are mixed (slotOf), for good: a probe ran past LONG_PROBE. */
  #mixed = false;
  #others: Record<number, V> = Object.create(null);
  #strings: Record<string, V> = Object.create(null);
  #rebuilds = 0;

  get size(): number {
    return this.#size;
  }

  /** Whether a long probe has switched the table to mixed slots (ids chosen to collide): for tests and diagnostics. */
  get mixed(): boolean {
    return this.#mixed;
  }

  /** Slots the whole-number table holds now (ids and values): for tests and diagnostics. */
  get capacity(): number {
    return this.#keys.length;
  }

  /** How often the whole-number table was rebuilt (grown, shrunk, mixed): for tests and diagnostics. */
  get rebuilds(): number {
    return this.#rebuilds;
  }

  get(id: RequestId): V | undefined {
    if (typeof id === 'string') return this.#strings[id];
    if (!isWhole(id)) return this.#others[id];
    const i = this.#find(id);
    return i < 0 ? undefined : this.#values[i];
  }

  has(id: RequestId): boolean {
    return this.get(id) !== undefined;
  }

  set(id: RequestId, value: V): this {
    if (typeof id === 'string') {
      if (this.#strings[id] === undefined) this.#size++;
      this.#strings[id] = value;
      return this;
    }
    if (!isWhole(id)) {
      if (this.#others[id] === undefined) this.#size++;
      this.#others[id] = value;
      return this;
    }
    const i = this.#find(id);
    if (i >= 0) {
      this.#values[i] = value;
      return this;
    }
    // At three quarters full, grown to twice the ids (a quarter to a half full after).
    if ((this.#used + 1) * 4 > this.#keys.length * 3) this.#rebuild(this.#used + 1);
    this.#used++;
    this.#size++;
    if (this.#place(id, value) > LONG_PROBE) this.#mix();
    return this;
  }

  delete(id: RequestId): boolean {
    if (typeof id === 'string') {
      if (this.#strings[id] === undefined) return false;
      delete this.#strings[id];
    } else if (!isWhole(id)) {
      if (this.#others[id] === undefined) return false;
      delete this.#others[id];
    } else {
      const i = this.#find(id);
      if (i < 0) return false;
      this.#shiftBack(i);
      this.#used--;
      // Grown for a burst (a 2025-03-26 batch of 70,000 requests: up to 4 MB of ids and values), a table
      // shrinks as it empties, or each of a session's tables held that for the session's life (a client's
      // few sessions, one big batch each, held gigabytes). At a sixteenth full: rebuilt (O(capacity),
      // paid for by the deletes since it was a quarter full); a table on the request path never gets there
      // (SHRINK_ABOVE).
      if (this.#size * 16 < this.#keys.length && this.#keys.length > SHRINK_ABOVE) {
        this.#size--;
        this.#rebuild(this.#used);
        return true;
      }
    }
    this.#size--;
    return true;
  }

  clear(): void {
    this.#keys = emptyKeys(MIN_CAPACITY);
    this.#values = new Array(MIN_CAPACITY).fill(undefined);
    this.#mask = MIN_CAPACITY - 1;
    this.#used = 0;
    this.#others = Object.create(null);
    this.#strings = Object.create(null);
    this.#size = 0;
  }

  /** Number ids in ascending order, then string ids in the order they were added. */
  *entries(): Generator<[RequestId, V]> {
    const numbers: Array<[number, V]> = [];
    const keys = this.#keys;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      if (k === k) numbers.push([k, this.#values[i]!]);
    }
    const others = this.#others;
    for (const k in others) numbers.push([Number(k), others[k as unknown as number]!]);
    numbers.sort((a, b) => a[0] - b[0]);
    yield* numbers;
    const strings = this.#strings;
    for (const k in strings) yield [k, strings[k]!];
  }

  *values(): Generator<V> {
    for (const [, v] of this.entries()) yield v;
  }

  [Symbol.iterator](): Generator<[RequestId, V]> {
    return this.entries();
  }

  /** The id's slot, or -1. A probe passing LONG_PROBE slots mixes the table (for the lookups after this one). */
  #find(id: number): number {
    const keys = this.#keys;
    const mask = this.#mask;
    for (let i = this.#home(id, mask), d = 0; ; i = (i + 1) & mask, d++) {
      const k = keys[i]!;
      if (k === id) return i;
      // An empty slot, or an id nearer its own first slot than this one would be: in Robin Hood order, not here.
      if (k !== k || ((i - this.#home(k, mask)) & mask) < d) {
        if (d > LONG_PROBE) this.#mix();
        return -1;
      }
    }
  }

  /**
   * Puts an id not in the table into it, in Robin Hood order: it takes the slot of the first id nearer its own
   * first slot than the one being placed is, which moves on in its place. Returns how far it probed.
   */
  #place(id: number, value: V | undefined): number {
    const keys = this.#keys;
    const values = this.#values;
    const mask = this.#mask;
    let d = 0;
    for (let i = this.#home(id, mask), probes = 0; ; i = (i + 1) & mask, d++, probes++) {
      const k = keys[i]!;
      if (k !== k) {
        keys[i] = id;
        values[i] = value;
        return probes;
      }
      const kd = (i - this.#home(k, mask)) & mask;
      if (kd < d) {
        const v = values[i];
        keys[i] = id;
        values[i] = value;
        id = k;
        value = v;
        d = kd;
      }
    }
  }

  /** Empties slot i: the ids after it that are not at their own first slot move back one each. */
  #shiftBack(i: number): void {
    const keys = this.#keys;
    const values = this.#values;
    const mask = this.#mask;
    for (let j = (i + 1) & mask; ; i = j, j = (j + 1) & mask) {
      const k = keys[j]!;
      if (k !== k || this.#home(k, mask) === j) break;
      keys[i] = k;
      values[i] = values[j];
    }
    keys[i] = Number.NaN;
    values[i] = undefined;
  }

  #home(id: number, mask: number): number {
    return this.#mixed ? slotOf(id, mask) : id & mask;
  }

  /** A probe ran long: ids chosen to collide. Slots are mixed from now on. */
  #mix(): void {
    if (this.#mixed) return;
    this.#mixed = true;
    this.#rebuild(this.#used);
  }

  /** Sized for `live` ids: at most a quarter full. */
  #rebuild(live: number): void {
    const keys = this.#keys;
    const values = this.#values;
    this.#rebuilds++;
    let capacity = MIN_CAPACITY;
    while (capacity < live * 4) capacity *= 2;
    this.#keys = emptyKeys(capacity);
    this.#values = new Array(capacity).fill(undefined);
    this.#mask = capacity - 1;
    for (let j = 0; j < keys.length; j++) {
      const k = keys[j]!;
      if (k === k) this.#place(k, values[j]);
    }
    // Emptied: should the old arrays have been promoted, dead, they hold nothing young alive.
    values.fill(undefined);
  }
}
