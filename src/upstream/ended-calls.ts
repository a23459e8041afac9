import type { UpstreamCaller } from './upstream-caller.js';

/**
 * The calls on one upstream connection the gateway gave up on (cancelled, timed out) and the upstream
 * never answered: it may still be working on them. A message it sends without saying which request it
 * belongs to (stdio says nothing) may be for one of them — sent before it read the cancel, the race the
 * spec warns about — so "the one session busy here" is no safe guess while another session's call is
 * remembered. Bounded: WINDOW_MS per call (an upstream that never stops a cancelled call is the one left
 * to misattribute), MAX calls at most, and forgotten once the upstream answers it after all.
 */
export class EndedCalls {
  static readonly WINDOW_MS = 30_000;
  static readonly MAX = 1024;
  /** Upstream request id → whose call it was and when it ended; insertion order is age order. */
  readonly #calls = new Map<number, { caller: UpstreamCaller; at: number }>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  get size(): number {
    this.#expire();
    return this.#calls.size;
  }

  add(id: number, caller: UpstreamCaller): void {
    this.#calls.delete(id);
    this.#calls.set(id, { caller, at: this.#now() });
    if (this.#calls.size > EndedCalls.MAX) this.#calls.delete(this.#calls.keys().next().value!);
  }

  /** The upstream answered it late: it is done with it, and sends nothing more for it. */
  answered(id: unknown): void {
    if (typeof id === 'number') this.#calls.delete(id);
  }

  /** A call of a session other than `caller` may still be running upstream. */
  otherThan(caller: UpstreamCaller): boolean {
    this.#expire();
    for (const c of this.#calls.values()) if (c.caller !== caller) return true;
    return false;
  }

  #expire(): void {
    const cutoff = this.#now() - EndedCalls.WINDOW_MS;
    for (const [id, c] of this.#calls) {
      if (c.at >= cutoff) return;
      this.#calls.delete(id);
    }
  }
}
