import { GatewayError } from '../errors.js';

/**
 * What this replica may conclude from the shared store right now. After any sign of trouble (a failed
 * or timed-out command, a lost or re-made connection) the store is *unsettled* for `settleMs`: long
 * enough for every live owner to beat again and re-publish what it holds. While unsettled, an absent
 * record or a silent owner proves nothing — the answer is a 503 to retry, never a 404 (which tells the
 * client to start over) and never a takeover of a session whose owner may be alive.
 */
export class StoreHealth {
  readonly #settleMs: number;
  readonly #now: () => number;
  #troubleAt = Number.NEGATIVE_INFINITY;

  constructor(settleMs: number, now: () => number = () => performance.now()) {
    this.#settleMs = settleMs;
    this.#now = now;
  }

  /** Something went wrong with the store (or it just came back): distrust absences for a while. */
  trouble(): void {
    this.#troubleAt = this.#now();
  }

  get settled(): boolean {
    return this.#now() - this.#troubleAt >= this.#settleMs;
  }

  /** Runs a store operation; any failure becomes SWB_STORE_UNAVAILABLE (the caller answers 503). */
  async read<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch {
      // The cause (a Redis address, a timeout) is for the logs, which the connection already writes.
      this.trouble();
      throw new GatewayError('SWB_STORE_UNAVAILABLE', 'the session store is unreachable; retry shortly');
    }
  }

  /** The refusal for a question the store cannot answer yet (an absence while unsettled). */
  recovering(): GatewayError {
    return new GatewayError('SWB_STORE_UNAVAILABLE', 'the session store is recovering from an outage; retry shortly');
  }
}
