import type { Logger } from '../observability/logger.js';
import type { VaultStore } from './vault-store.js';

/**
 * How long a dead link (no refresh token, its access token expired: its next use asks for consent again)
 * is kept after it expired: listed as expired to its user and operators, then deleted. 30 days.
 */
export const DEAD_LINK_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
/** How often the vault is swept (by one replica of all, when they share Redis). */
export const DEAD_LINK_SWEEP_MS = 60 * 60 * 1000;

/**
 * Deletes dead links DEAD_LINK_RETENTION_MS after they expired: a link its user never uses again was kept
 * forever (a use deletes it at once and asks for consent), and the vault grew without bound. Once at start,
 * then every DEAD_LINK_SWEEP_MS; a sweep that fails (Redis away) is logged and tried at the next.
 */
export class DeadLinks {
  readonly #store: VaultStore;
  readonly #logger: Logger;
  #timer: NodeJS.Timeout | undefined;
  #sweeping: Promise<void> | undefined;

  constructor(store: VaultStore, logger: Logger) {
    this.#store = store;
    this.#logger = logger;
  }

  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.sweep(), DEAD_LINK_SWEEP_MS).unref();
    void this.sweep();
  }

  /** One sweep (the one under way, if any). */
  sweep(now = Date.now()): Promise<void> {
    this.#sweeping ??= this.#store
      .sweepDead(now - DEAD_LINK_RETENTION_MS, DEAD_LINK_SWEEP_MS)
      .then(
        (n) => void (n && this.#logger.info({ deleted: n, retentionDays: DEAD_LINK_RETENTION_MS / 86_400_000 }, 'vault: dead links deleted (expired, no refresh token)')),
        (err: Error) => this.#logger.warn({ reason: err.message }, 'vault: the sweep of dead links failed; tried again at the next'),
      )
      .finally(() => (this.#sweeping = undefined));
    return this.#sweeping;
  }

  /** Stops the timer and waits for a sweep under way (its store is closed next). */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#sweeping;
  }
}
