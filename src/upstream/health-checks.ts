import type { UpstreamConfig } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import type { UpstreamClient } from './upstream-client.js';

/**
 * An instance's health checks: a ping on an interval to the client it runs now; after
 * `healthCheck.failures` missed pings in a row the instance is told (`unhealthy`): it lets the client go
 * and restarts it as after a crash. A ping answered late by a client already replaced counts for nothing.
 */
export class HealthChecks {
  readonly #config: UpstreamConfig['healthCheck'];
  readonly #logger: Logger;
  #timer: NodeJS.Timeout | undefined;
  #missed = 0;

  constructor(config: UpstreamConfig['healthCheck'], logger: Logger) {
    this.#config = config;
    this.#logger = logger;
  }

  /** Checks `client` from now on, for as long as `current()` says it is the instance's client. */
  start(client: UpstreamClient, current: () => UpstreamClient | undefined, unhealthy: () => void): void {
    this.stop();
    const hc = this.#config;
    if (hc.intervalMs === 0) return;
    this.#missed = 0;
    this.#timer = setInterval(() => {
      if (current() !== client) return;
      client.request('ping', undefined, { timeoutMs: hc.timeoutMs, maxTimeoutMs: hc.timeoutMs }).then(
        () => {
          this.#missed = 0;
        },
        (err: Error) => {
          if (current() !== client) return;
          this.#missed++;
          this.#logger.warn({ missed: this.#missed, err: err.message }, 'upstream missed a health-check ping');
          if (this.#missed >= hc.failures) {
            this.#logger.error('upstream failed its health checks; restarting it');
            // Down now: a hung process takes the stop's whole escalation (stdin, SIGTERM, SIGKILL) to go, and
            // left "ready" until then it was handed calls that failed while another instance could serve them.
            unhealthy();
          }
        },
      );
    }, hc.intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
