import type { Cancellation } from '../jsonrpc/cancellation.js';
import type { RequestId } from '../jsonrpc/types.js';
import type { UpstreamCaller } from './upstream-caller.js';

const NO_SUBSCRIBERS: ReadonlySet<UpstreamCaller> = new Set();

export interface SubscriptionLink {
  /** A 2025 upstream: resources/subscribe and resources/unsubscribe requests. */
  request(method: string, params: Record<string, unknown>, o: { caller?: UpstreamCaller | undefined; callerRequestId?: RequestId | undefined; signal?: Cancellation | undefined }): Promise<unknown>;
  /** A 2026-07-28 upstream has no such requests: its subscriptions/listen stream is opened again with the new set. */
  isModern(): boolean;
  relisten(): void;
}

/**
 * One instance's resource subscriptions: URI → the sessions subscribed, reference-counted across the
 * sessions sharing the instance. The upstream hears of a URI once (the first subscriber) and is told to
 * drop it once (the last one out); a modern upstream instead gets the whole set on its listen stream.
 */
export class ResourceSubscriptions {
  readonly #map = new Map<string, Set<UpstreamCaller>>();
  /** URI → the first subscribe to it still on its way upstream, which later subscribers join. */
  readonly #first = new Map<string, Promise<void>>();
  readonly #link: SubscriptionLink;

  constructor(link: SubscriptionLink) {
    this.#link = link;
  }

  uris(): string[] {
    return [...this.#map.keys()];
  }

  subscribers(uri: string): ReadonlySet<UpstreamCaller> {
    return this.#map.get(uri) ?? NO_SUBSCRIBERS;
  }

  async subscribe(uri: string, caller: UpstreamCaller, o: { callerRequestId?: RequestId | undefined; signal?: Cancellation | undefined; params?: Record<string, unknown> | undefined }): Promise<void> {
    for (let first = this.#first.get(uri); !this.#map.has(uri) && first; first = this.#first.get(uri)) {
      // Another session's first subscribe to this URI is on its way: it is joined, not sent again. Two
      // first subscribes in flight would each complete in either order, and the first subscriber's
      // last-one-out unsubscribe could then reach the upstream after the other's subscribe, leaving a
      // session that believes itself subscribed to a URI the upstream dropped. If that request fails
      // (its own caller cancelled it, say), this one tries on its own.
      await first.catch(() => {});
    }
    const subscribers = this.#map.get(uri);
    if (subscribers) {
      subscribers.add(caller);
      return;
    }
    if (this.#link.isModern()) {
      this.#map.set(uri, new Set([caller]));
      this.#link.relisten();
      return;
    }
    const first = this.#link.request('resources/subscribe', o.params ?? { uri }, { caller, callerRequestId: o.callerRequestId, signal: o.signal })
      .then(() => { this.#map.set(uri, new Set([caller])); });
    this.#first.set(uri, first);
    try {
      await first;
    } finally {
      this.#first.delete(uri);
    }
  }

  /** Drops a session's subscription; the last one out tells the upstream (best effort). */
  async unsubscribe(uri: string, caller: UpstreamCaller, signal?: Cancellation): Promise<void> {
    const subscribers = this.#map.get(uri);
    if (!subscribers?.delete(caller) || subscribers.size > 0) return;
    this.#map.delete(uri);
    if (this.#link.isModern()) return this.#link.relisten();
    await this.#link.request('resources/unsubscribe', { uri }, { signal }).catch(() => {});
  }
}
