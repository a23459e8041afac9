/** A POST's answer held back as JSON until it is complete; `expire` turns it into a stream. */
export interface HeldAnswer {
  deadline: number;
  expire(): void;
}

/**
 * The deadlines of every answer held under `responseMode: auto`, on one coarse timer instead of a
 * timer per request: most answers are complete long before the hold ends, and a timer armed and
 * cleared per call costs more than a Set entry. The timer runs only while something is held, and an
 * answer can be held up to one tick longer than the hold.
 */
export class AnswerHolds {
  readonly holdMs: number;
  readonly #tickMs: number;
  readonly #held = new Set<HeldAnswer>();
  #timer: NodeJS.Timeout | undefined;

  constructor(holdMs: number) {
    this.holdMs = holdMs;
    this.#tickMs = Math.max(5, Math.floor(holdMs / 4));
  }

  hold(answer: HeldAnswer): void {
    this.#held.add(answer);
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#sweep(), this.#tickMs);
      this.#timer.unref();
    }
  }

  release(answer: HeldAnswer): void {
    this.#held.delete(answer);
  }

  get size(): number {
    return this.#held.size;
  }

  #sweep(): void {
    if (this.#held.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    const now = performance.now();
    // Oldest first (insertion order): the sweep stops at the first answer still inside its hold.
    for (const a of this.#held) {
      if (a.deadline > now) break;
      this.#held.delete(a);
      a.expire();
    }
  }

  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#held.clear();
  }
}
