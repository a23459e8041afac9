import type { Cancellation } from '../jsonrpc/cancellation.js';

/** At most `max` holders; up to `queue` more wait (each at most timeoutMs); beyond that, refused at once. */
export class Semaphore {
  readonly #max: number;
  readonly #queue: number;
  #held = 0;
  /** Releases to come that keep their slot taken (see keep). */
  #kept = 0;
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

  /**
   * Resolves true when acquired, false when the queue is full, the wait timed out or `signal` was
   * cancelled. A cancelled waiter leaves the queue at once: kept there, it took a place a later request
   * was refused for, and a freed slot went first to it (to be given back) before anyone still waiting.
   */
  acquire(timeoutMs: number, signal?: Cancellation): Promise<boolean> | boolean {
    if (this.#held < this.#max) {
      this.#held++;
      return true;
    }
    if (this.#waiting.length >= this.#queue || signal?.aborted) return false;
    return new Promise((resolve) => {
      const leave = (): void => {
        const i = this.#waiting.indexOf(w);
        if (i !== -1) this.#waiting.splice(i, 1);
        clearTimeout(w.timer);
        resolve(false);
      };
      const w = {
        grant: () => {
          signal?.offAbort(leave);
          resolve(true);
        },
        timer: setTimeout(() => {
          signal?.offAbort(leave);
          leave();
        }, timeoutMs),
      };
      this.#waiting.push(w);
      signal?.onAbort(leave);
    });
  }

  /**
   * The next release() keeps its slot taken: a holder about to give its own back passes it on to what
   * outlives it (a cancelled call its upstream may run on, see InstanceCalls), which releases it later. Not a
   * second acquire: a release passes its slot straight to a waiter, which then ran beside what holds it on.
   */
  keep(): void {
    this.#kept++;
  }

  release(): void {
    if (this.#kept > 0) {
      this.#kept--;
      return;
    }
    const next = this.#waiting.shift();
    if (next) {
      clearTimeout(next.timer);
      next.grant(); // the slot passes straight to the next waiter
      return;
    }
    this.#held = Math.max(0, this.#held - 1);
  }
}
