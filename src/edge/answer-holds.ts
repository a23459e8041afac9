/** Whatever holds an answer back: told when the hold of one of its answers has run out. */
export interface HoldOwner {
  holdExpired(held: Held): void;
}

/** An answer held back (a POST's stream record): it names its owner, so a hold needs no closure. */
export interface Held {
  readonly holder: HoldOwner;
}

/**
 * Things held back for a moment, on one coarse timer instead of a timer per request: the answers held
 * as JSON under `responseMode: auto`, and the headers of SSE answers waiting for their first event.
 * Most are done long before the hold ends. Two generations, swapped every hold:
 * an answer still held when its generation is swapped out a second time has been held at least the
 * hold and at most twice that, and is told to stream. Per request this costs a Set insertion and
 * deletion, with no timestamp or closure to allocate (this runs on every call).
 */
export class AnswerHolds {
  readonly holdMs: number;
  #young = new Set<Held>();
  #old = new Set<Held>();
  #timer: NodeJS.Timeout | undefined;

  constructor(holdMs: number) {
    this.holdMs = holdMs;
  }

  hold(answer: Held): void {
    this.#young.add(answer);
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#swap(), this.holdMs);
      this.#timer.unref();
    }
  }

  /** The answer is complete (or gone): no longer held. */
  release(answer: Held): void {
    if (!this.#young.delete(answer)) this.#old.delete(answer);
  }

  get size(): number {
    return this.#young.size + this.#old.size;
  }

  #swap(): void {
    const expired = this.#old;
    this.#old = this.#young;
    this.#young = expired.size === 0 ? expired : new Set();
    for (const a of expired) a.holder.holdExpired(a);
    if (this.#old.size === 0 && this.#young.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#young.clear();
    this.#old.clear();
  }
}
