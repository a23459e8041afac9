/**
 * The last `max` ids seen, to take each once: the newest kept, the oldest forgotten first (a Set keeps
 * insertion order). Bounded by count, not time: what it guards against (a message sent again by ioredis
 * when its link comes back, see Tunnel) comes within one reconnection, seconds at most.
 */
export class RecentIds {
  readonly #ids = new Set<string>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  /** Remembers `id`; false when it was remembered already. */
  first(id: string): boolean {
    if (this.#ids.has(id)) return false;
    this.#ids.add(id);
    if (this.#ids.size > this.#max) this.#ids.delete(this.#ids.values().next().value!);
    return true;
  }
}
