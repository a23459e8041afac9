/**
 * One request's cancellation: the part of AbortController/AbortSignal the gateway uses, without an
 * EventTarget per request (creating an AbortSignal was ~4 % of the gateway's CPU under load). It is the
 * only cancellation type in src/: requests in either direction and the hops between them carry it.
 * Listeners run synchronously, once, in the order added.
 */
export class Cancellation {
  #aborted = false;
  #reason: unknown;
  #listeners: Array<() => void> | undefined;

  get aborted(): boolean {
    return this.#aborted;
  }

  get reason(): unknown {
    return this.#reason;
  }

  abort(reason?: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (listeners) for (const fn of listeners) fn();
  }

  /** Runs `fn` when cancelled (never if already cancelled: check `aborted` first). */
  onAbort(fn: () => void): void {
    if (!this.#aborted) (this.#listeners ??= []).push(fn);
  }

  /** Forgets `fn` (the work it would stop is done): no closure per listener just to remove it. */
  offAbort(fn: () => void): void {
    const l = this.#listeners;
    const i = l ? l.indexOf(fn) : -1;
    if (i >= 0) l!.splice(i, 1);
  }
}
