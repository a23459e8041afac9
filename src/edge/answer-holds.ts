/** Whatever holds an answer back: told when the hold of one of its answers has run out. */
export interface HoldOwner {
  holdExpired(held: Held): void;
}

/** An answer held back (a POST's stream record): it names its owner, so a hold needs no closure. */
export interface Held {
  readonly holder: HoldOwner;
  /** The generation it is held in; 0 when it is not held (AnswerHolds' own: start it at 0). */
  holdTicket: number;
  /** Where in its generation's array it is (AnswerHolds' own: start it at 0). */
  holdSlot: number;
}

/**
 * Things held back for a moment, on one coarse timer instead of a timer per request: the answers held
 * as JSON under `responseMode: auto`, the headers of SSE answers waiting for their first event, and POST
 * streams answered to a live reader, kept resumable for a grace. Most of the first two are done long
 * before the hold ends. Two generations, swapped every hold:
 * an answer still held when its generation is swapped out a second time has been held at least the
 * hold and at most twice that, and is told to stream. Per request this costs an array push and a
 * number written on the answer, with no timestamp or closure to allocate (this runs on every call).
 * Not a Set: one that every request adds to and deletes from is rehashed every few dozen requests, and
 * V8 links each replaced table to its successor, which can keep every later table and its answers alive
 * into the old generation (see RequestTable). A released answer's slot in its generation's array is
 * cleared at once: left there until the array was swapped out (one to two holds), every answer of an
 * SSE or auto-mode POST outlived one or two young-generation collections with its response, request and
 * socket state, and was promoted (Node 22, 64 calls in flight: ~10 MB promoted every half second, the
 * young collections 6 ms against 0.8 ms for JSON answers, and a full collection every few seconds).
 * Each array is emptied once read.
 */
export class AnswerHolds {
  readonly holdMs: number;
  #young: Array<Held | undefined> = [];
  #old: Array<Held | undefined> = [];
  /** The young generation's ticket (the old one's is one less). */
  #generation = 1;
  #held = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(holdMs: number) {
    this.holdMs = holdMs;
  }

  hold(answer: Held): void {
    if (answer.holdTicket === 0) this.#held++;
    else this.#unlist(answer);
    answer.holdTicket = this.#generation;
    answer.holdSlot = this.#young.push(answer) - 1;
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#swap(), this.holdMs);
      this.#timer.unref();
    }
  }

  /** The answer is complete (or gone): no longer held. */
  release(answer: Held): void {
    if (answer.holdTicket === 0) return;
    this.#unlist(answer);
    answer.holdTicket = 0;
    this.#held--;
  }

  /** Clears the answer's slot in the generation it is held in, so that the array no longer keeps it alive. */
  #unlist(answer: Held): void {
    const list = answer.holdTicket === this.#generation ? this.#young : answer.holdTicket === this.#generation - 1 ? this.#old : undefined;
    if (list !== undefined && list[answer.holdSlot] === answer) list[answer.holdSlot] = undefined;
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
      // Released (its slot cleared), or held again since (a later ticket): not this generation's to expire.
      if (a === undefined || a.holdTicket !== ticket) continue;
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
    for (const a of this.#young) if (a) a.holdTicket = 0;
    for (const a of this.#old) if (a) a.holdTicket = 0;
    this.#young = [];
    this.#old = [];
    this.#held = 0;
  }
}
