import type { Logger } from '../observability/logger.js';
import type { VaultStore } from './vault-store.js';

/**
 * How long a dead link (no refresh token, its access token expired: its next use asks for consent again)
 * is kept after it expired: listed as expired to its user and operators, then deleted. 30 days.
 */
export const DEAD_LINK_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
/** How often the vault is swept (by one replica of all, when they share Redis). */
export const DEAD_LINK_SWEEP_MS = 60 * 60 * 1000;

/** A sweep that failed is tried again after this, doubling up to RETRY_MAX_MS, until one succeeds. */
const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 5 * 60 * 1000;

/**
 * Deletes dead links DEAD_LINK_RETENTION_MS after they expired: a link its user never uses again was kept
 * forever (a use deletes it at once and asks for consent), and the vault grew without bound. Once at start,
 * then every DEAD_LINK_SWEEP_MS. A sweep that fails is logged (the first of a run of failures) and tried
 * again a second later, then at doubling waits: the one at start ran before the Redis connection was up
 * and failed at once ("Stream isn't writeable"), and was tried again only an hour later.
 */
export class DeadLinks {
  readonly #store: VaultStore;
  readonly #logger: Logger;
  #timer: NodeJS.Timeout | undefined;
  #sweeping: Promise<void> | undefined;
  #retry: NodeJS.Timeout | undefined;
  /** The wait before the next retry; 0 while sweeps succeed. */
  #retryMs = 0;
  readonly #configured: (() => readonly string[]) | undefined;

  /** `configured`: the user-oauth upstreams configured now (read at each sweep: reloads change them); links to others go too (isSwept). */
  constructor(store: VaultStore, logger: Logger, configured?: () => readonly string[]) {
    this.#store = store;
    this.#logger = logger;
    this.#configured = configured;
  }

  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.sweep(), DEAD_LINK_SWEEP_MS).unref();
    void this.sweep();
  }

  /** One sweep (the one under way, if any). */
  sweep(now = Date.now()): Promise<void> {
    this.#sweeping ??= this.#store
      .sweepDead(now - DEAD_LINK_RETENTION_MS, DEAD_LINK_SWEEP_MS, this.#configured && new Set(this.#configured()))
      .then(
        (n) => {
          // A retry still pending (this was the hourly sweep) would sweep again for nothing.
          clearTimeout(this.#retry);
          this.#retry = undefined;
          this.#retryMs = 0;
          if (n) this.#logger.info({ deleted: n, retentionDays: DEAD_LINK_RETENTION_MS / 86_400_000 }, 'vault: dead links deleted (expired: no refresh token, or their upstream no longer configured)');
        },
        (err: Error) => this.#failed(err),
      )
      .finally(() => (this.#sweeping = undefined));
    return this.#sweeping;
  }

  #failed(err: Error): void {
    if (this.#retryMs === 0) this.#logger.warn({ reason: err.message }, 'vault: the sweep of dead links failed; tried again shortly');
    this.#retryMs = Math.min(this.#retryMs === 0 ? RETRY_FIRST_MS : this.#retryMs * 2, RETRY_MAX_MS);
    // Not once stopped (close ran), nor twice at once.
    if (this.#timer === undefined || this.#retry !== undefined) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      void this.sweep();
    }, this.#retryMs).unref();
  }

  /** Stops the timer and waits for a sweep under way (its store is closed next). */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    clearTimeout(this.#retry);
    this.#timer = undefined;
    this.#retry = undefined;
    await this.#sweeping;
  }
}
