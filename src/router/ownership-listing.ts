import type { Cancellation } from '../jsonrpc/cancellation.js';

/**
 * How long one listing of a session's resources and templates answers for URIs no list has named. An
 * upstream that adds resources without saying so (no resources/list_changed) has them found within
 * this long; a client asking about unknown URIs in a loop costs its upstreams one listing this often.
 */
export const OWNERSHIP_LISTING_MS = 10_000;

/**
 * The listing a session makes to learn which upstream owns a URI no list has named (resources and
 * templates, every page). Without it kept, every subscribe to (or, with several upstreams, read of) an
 * unknown URI walked up to 100 pages of each list again, against upstreams other sessions share. Kept
 * until OWNERSHIP_LISTING_MS have passed or the lists change; one in flight is shared, not repeated.
 */
export class OwnershipListing {
  readonly #now: () => number;
  #last: Promise<void> | undefined;
  #at = 0;

  /** `now`: a monotonic clock in ms (injected by tests). */
  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /**
   * Runs `list`, unless a listing ran (or runs) within OWNERSHIP_LISTING_MS and the lists have not
   * changed since: then that one answers. A failed listing counts as made (what it learned is learned):
   * one failing at page 99 must not be walked again on each unknown URI. So `list` runs under a
   * cancellation of its own, never the request's that started it: a client cancelling that request would
   * end the listing the others wait on, and leave it counted as made. `signal` stops only this wait.
   */
  run(list: () => Promise<void>, signal?: Cancellation): Promise<void> {
    if (this.#last === undefined || this.#now() - this.#at >= OWNERSHIP_LISTING_MS) {
      this.#at = this.#now();
      this.#last = list().catch(() => {});
    }
    const listing = this.#last;
    if (!signal) return listing;
    if (signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      signal.onAbort(resolve);
      void listing.then(() => {
        signal.offAbort(resolve);
        resolve();
      });
    });
  }

  /** An upstream's resources changed (resources/list_changed, a restart, a reload): the next unknown URI lists again. */
  changed(): void {
    this.#last = undefined;
  }
}
