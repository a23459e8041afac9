import type { Logger } from '../observability/logger.js';
import type { UpstreamClient } from './upstream-client.js';

/** How often a retiring client is looked at for calls left (as a retiring pool is: rare, and short-lived). */
const POLL_MS = 50;

/**
 * An instance's clients it no longer sends anything to, whose processes may still run. One let go (crashed,
 * unhealthy, its session forgotten) is closed at once. One retired was replaced while calls ran on it: a
 * process holding an exchanged token that was renewed or narrowed (see checkedRequests) is replaced by one
 * started with the new token, and stopping it at once failed every call in flight on it. It is sent no
 * request again (its transport refuses them), but what its calls still need goes on passing through it, as
 * through any client of the instance: their answers and progress, their cancellations, the questions its
 * server asks the caller (sampling, elicitation) and their answers. It is stopped once its last call ends,
 * or at `boundMs` (maxRequestTimeoutMs: no call sent to it may outlive that), and with the instance.
 */
export class RetiringClients {
  readonly #closing = new Map<UpstreamClient, Promise<void>>();
  /** The retired ones among them: their calls still count (a client let go has its calls failing already). */
  readonly #retired = new Set<UpstreamClient>();

  /** Calls still running on retired clients: the instance is busy (not idle, not drained) until they end. */
  get inflight(): number {
    if (this.#retired.size === 0) return 0;
    let n = 0;
    for (const c of this.#retired) n += c.inflight;
    return n;
  }

  /** Closes `client` now; a stop of the instance waits for its process to be gone. */
  letGo(client: UpstreamClient): void {
    this.#track(client, client.close());
  }

  /** Lets `client` finish the calls sent to it, then closes it. */
  retire(client: UpstreamClient, boundMs: number, logger: Logger): void {
    logger.info({ inflight: client.inflight }, 'upstream process replaced; it finishes its calls in flight, then stops');
    this.#retired.add(client);
    this.#track(client, this.#drained(client, performance.now() + boundMs, logger).then(() => client.close()));
  }

  async #drained(client: UpstreamClient, deadline: number, logger: Logger): Promise<void> {
    while (client.inflight > 0 && !client.closed && performance.now() < deadline) await new Promise((r) => setTimeout(r, POLL_MS));
    if (client.inflight > 0 && !client.closed) logger.warn({ inflight: client.inflight }, 'replaced upstream process still had calls at maxRequestTimeoutMs; stopping it');
  }

  #track(client: UpstreamClient, closed: Promise<void>): void {
    const done = closed.catch(() => {}).finally(() => {
      this.#retired.delete(client);
      if (this.#closing.get(client) === done) this.#closing.delete(client);
    });
    this.#closing.set(client, done);
  }

  /** The instance stops: every one is closed now (calls still on them fail, as on the instance's own), and waited for. */
  async close(): Promise<void> {
    await Promise.all([...this.#closing.keys()].map((c) => c.close().catch(() => {})));
    await Promise.all(this.#closing.values());
  }
}
