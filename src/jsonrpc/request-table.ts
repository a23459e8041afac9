import type { RequestId } from './types.js';

/** A slot whose id was deleted: probing goes on past it, an insertion may take it. (No id is Infinity: JSON has none.) */
const GONE = Number.POSITIVE_INFINITY;
const MIN_CAPACITY = 16;

/** A slot never used is NaN, the one value unequal to itself: probing stops there. */
function emptyKeys(capacity: number): Float64Array {
  return new Float64Array(capacity).fill(Number.NaN);
}

/** Ids kept in the open-addressing table: whole numbers (a stream number may exceed 32 bits). */
function isWhole(id: number): boolean {
  return Math.floor(id) === id && id !== GONE;
}

/**
 * What is in flight, by request id: the few operations of a Map the request path needs. Whole-number ids
 * (the gateway's own, and nearly every client's) live in an open-addressing table (the ids in a
 * Float64Array, the values in an array), hashed by their low 32 bits (ids that rise one by one never
 * collide); other ids in dictionary objects, numbers apart from strings (`1` and `"1"` are different
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
 */
export class RequestTable<V> {
  #keys = emptyKeys(MIN_CAPACITY);
  #values: Array<V | undefined> = new Array(MIN_CAPACITY).fill(undefined);
  #mask = MIN_CAPACITY - 1;
  /** Slots that are not empty: live ids and GONE marks (probing stops only at an empty one). */
  #used = 0;
  #size = 0;
  #others: Record<number, V> = Object.create(null);
  #strings: Record<string, V> = Object.create(null);

  get size(): number {
    return this.#size;
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
    const keys = this.#keys;
    const mask = this.#mask;
    let free = -1;
    for (let i = id & mask; ; i = (i + 1) & mask) {
      const k = keys[i];
      if (k === id) {
        this.#values[i] = value;
        return this;
      }
      if (k === GONE) {
        if (free < 0) free = i;
      } else if (k !== k) {
        if (free < 0) {
          free = i;
          this.#used++;
        }
        break;
      }
    }
    keys[free] = id;
    this.#values[free] = value;
    this.#size++;
    // At three quarters full (GONE marks count: they lengthen probes), rebuilt at a quarter of live ids.
    if (this.#used * 4 >= keys.length * 3) this.#rebuild();
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
      this.#keys[i] = GONE;
      this.#values[i] = undefined;
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
      if (k === k && k !== GONE) numbers.push([k, this.#values[i]!]);
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

  #find(id: number): number {
    const keys = this.#keys;
    const mask = this.#mask;
    for (let i = id & mask; ; i = (i + 1) & mask) {
      const k = keys[i];
      if (k === id) return i;
      if (k !== k) return -1;
    }
  }

  #rebuild(): void {
    const keys = this.#keys;
    const values = this.#values;
    // Sized for the ids this table holds (#size also counts those kept in the dictionary objects).
    let live = 0;
    for (let j = 0; j < keys.length; j++) if (keys[j] === keys[j] && keys[j] !== GONE) live++;
    let capacity = MIN_CAPACITY;
    while (capacity < live * 4) capacity *= 2;
    const mask = capacity - 1;
    const nk = emptyKeys(capacity);
    const nv: Array<V | undefined> = new Array(capacity).fill(undefined);
    for (let j = 0; j < keys.length; j++) {
      const k = keys[j]!;
      if (k !== k || k === GONE) continue;
      let i = k & mask;
      while (nk[i] === nk[i]) i = (i + 1) & mask;
      nk[i] = k;
      nv[i] = values[j];
    }
    // Emptied: should the old arrays have been promoted, dead, they hold nothing young alive.
    values.fill(undefined);
    this.#keys = nk;
    this.#values = nv;
    this.#mask = mask;
    this.#used = live;
  }
}
