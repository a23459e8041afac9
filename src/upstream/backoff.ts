/** Exponential backoff with full jitter on the upper half, so restarts of many instances spread out. */
export class Backoff {
  readonly #initial: number;
  readonly #max: number;
  #attempt = 0;

  constructor(initialMs: number, maxMs: number) {
    this.#initial = initialMs;
    this.#max = maxMs;
  }

  get attempt(): number {
    return this.#attempt;
  }

  next(): number {
    const base = Math.min(this.#max, this.#initial * 2 ** this.#attempt);
    this.#attempt++;
    return Math.round(base / 2 + (Math.random() * base) / 2);
  }

  reset(): void {
    this.#attempt = 0;
  }
}
