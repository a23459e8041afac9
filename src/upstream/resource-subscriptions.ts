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
    await this.#link.request('resources/subscribe', o.params ?? { uri }, { caller, callerRequestId: o.callerRequestId, signal: o.signal });
    // Another session may have subscribed while this request was on its way.
    const now = this.#map.get(uri) ?? new Set<UpstreamCaller>();
    now.add(caller);
    this.#map.set(uri, now);
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
