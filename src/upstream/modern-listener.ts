import { Cancellation } from '../jsonrpc/cancellation.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import type { Logger } from '../observability/logger.js';
import type { ResourceSubscriptions } from './resource-subscriptions.js';
import type { UpstreamClient } from './upstream-client.js';

/**
 * A modern upstream's list_changed stream (subscriptions/listen), reopened while its connection lasts (the upstream
 * may end it). Kept apart from UpstreamInstance, which only says which client is current: the instance had grown
 * to its size limit, and the stream's reopening rules are read on their own.
 */
export class ModernListener {
  readonly #subscriptions: ResourceSubscriptions;
  readonly #logger: Logger;
  /** The instance's current client: a stream of a client replaced or gone is not reopened. */
  readonly #current: () => UpstreamClient | undefined;
  /** Stops the current listen stream (a new one replaces it). */
  #listening: Cancellation | undefined;

  constructor(subscriptions: ResourceSubscriptions, logger: Logger, current: () => UpstreamClient | undefined) {
    this.#subscriptions = subscriptions;
    this.#logger = logger;
    this.#current = current;
  }

  /** Opens `client`'s listen stream, replacing the one open before. */
  listen(client: UpstreamClient): void {
    this.#listening?.abort('replaced');
    const mine = new Cancellation();
    this.#listening = mine;
    const again = () => {
      if (this.#current() === client && this.#listening === mine) setTimeout(() => this.#current() === client && this.#listening === mine && this.listen(client), 1000).unref();
    };
    void client.listen(this.#subscriptions.listening(), mine, (n) => this.#listening === mine && this.#subscriptions.acknowledged(n)).then(again, (err: Error) => {
      if (this.#listening === mine) this.#subscriptions.refused(err); // ended unacknowledged (refused, dropped, stopped): nothing it asked is honoured
      if (this.#current() !== client) return;
      this.#logger.debug({ err: err.message }, 'upstream subscriptions/listen ended');
      if (!(err instanceof JsonRpcError)) again(); // refused (a JSON-RPC error) it would be again; lost (its stream dropped): listened to again
    });
  }
}
