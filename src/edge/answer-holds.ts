/** Whatever holds an answer back: told when the hold of one of its answers has run out. */
export interface HoldOwner {
  holdExpired(held: Held): void;
}

/** An answer held back (a POST's stream record): it names its owner, so a hold needs no closure. */
export interface Held {
  readonly holder: HoldOwner;
  /** The generation it is held in; 0 when it is not held (AnswerHolds' own: start it at 0). */
  holdTicket: number;
}

/**
 * Things held back for a moment, on one coarse timer instead of a timer per request: the answers held
 * as JSON under `responseMode: auto`, and the headers of SSE answers waiting for their first event.
 * Most are done long before the hold ends. Two generations, swapped every hold:
 * an answer still held when its generation is swapped out a second time has been held at least the
 * hold and at most twice that, and is told to stream. Per request this costs an array push and a
 * number written on the answer, with no timestamp or closure to allocate (this runs on every call).
 * Not a Set: one that every request adds to and deletes from is rehashed every few dozen requests, and
 * V8 links each replaced table to its successor, which can keep every later table and its answers alive
 * into the old generation (see RequestTable). Released answers stay in their generation's array, marked
 * by their ticket, until it is swapped out; each array is emptied once read.
 */
export class AnswerHolds {
  readonly holdMs: number;
  #young: Held[] = [];
  #old: Held[] = [];
  /** The young generation's ticket (the old one's is one less). */
  #generation = 1;
  #held = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(holdMs: number) {
    this.holdMs = holdMs;
  }

  hold(answer: Held): void {
    if (answer.holdTicket === 0) this.#held++;
    answer.holdTicket = this.#generation;
    this.#young.push(answer);
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#swap(), this.holdMs);
      this.#timer.unref();
    }
  }

  /** The answer is complete (or gone): no longer held. */
  release(answer: Held): void {
    if (answer.holdTicket === 0) return;
    answer.holdTicket = 0;
    this.#held--;
  }

  get size(): number {
    return this.#held;
  }

  #swap(): void {
    const expired = this.#old;
    const ticket = this.#generation - 1;
    this.#old = this.#young;
    this.#generation++;
    this.#young = [];
    for (const a of expired) {
      // Released, or held again since (a later ticket): not this generation's to expire.
      if (a.holdTicket !== ticket) continue;
      a.holdTicket = 0;
      this.#held--;
      a.holder.holdExpired(a);
    }
    expired.length = 0;
    if (this.#held === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      this.#old.length = 0;
    }
  }

  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    for (const a of this.#young) a.holdTicket = 0;
    for (const a of this.#old) a.holdTicket = 0;
    this.#young = [];
    this.#old = [];
    this.#held = 0;
  }
}
