/** At most `max` holders; up to `queue` more wait (each at most timeoutMs); beyond that, refused at once. */
export class Semaphore {
  readonly #max: number;
  readonly #queue: number;
  #held = 0;
  readonly #waiting: Array<{ grant: () => void; timer: NodeJS.Timeout }> = [];

  constructor(max: number, queue: number) {
    this.#max = max;
    this.#queue = queue;
  }

  get held(): number {
    return this.#held;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  /** Resolves true when acquired, false when the queue is full or the wait timed out. */
  acquire(timeoutMs: number): Promise<boolean> | boolean {
    if (this.#held < this.#max) {
      this.#held++;
      return true;
    }
    if (this.#waiting.length >= this.#queue) return false;
    return new Promise((resolve) => {
      const w = {
        grant: () => resolve(true),
        timer: setTimeout(() => {
          const i = this.#waiting.indexOf(w);
          if (i !== -1) this.#waiting.splice(i, 1);
          resolve(false);
        }, timeoutMs),
      };
      this.#waiting.push(w);
    });
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next) {
      clearTimeout(next.timer);
      next.grant(); // the slot passes straight to the next waiter
      return;
    }
    this.#held = Math.max(0, this.#held - 1);
  }
}
