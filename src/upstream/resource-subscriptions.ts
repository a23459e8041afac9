import { GatewayError } from '../errors.js';
import type { Cancellation } from '../jsonrpc/cancellation.js';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import { SubscribedUris } from '../jsonrpc/subscribed-uris.js';
import type { RequestId } from '../jsonrpc/types.js';
import type { UpstreamCaller } from './upstream-caller.js';

const NO_SUBSCRIBERS: ReadonlySet<UpstreamCaller> = new Set();

export interface SubscriptionLink {
  /** A 2025 upstream: resources/subscribe and resources/unsubscribe requests. */
  request(method: string, params: Record<string, unknown>, o: { caller?: UpstreamCaller | undefined; callerRequestId?: RequestId | undefined; signal?: Cancellation | undefined }): Promise<unknown>;
  /** A 2026-07-28 upstream has no such requests: its subscriptions/listen stream is opened again with the new set. */
  isModern(): boolean;
  /** Opens it again with uris() and listening(); its acknowledgement is told to acknowledged(). */
  relisten(): void;
  /** The upstream's name, and how long its acknowledgement is waited for (its requestTimeoutMs). */
  upstream(): { name: string; requestTimeoutMs: number };
}

type Acknowledgement = (honoured: ReadonlySet<string> | Error) => void;

/**
 * One instance's resource subscriptions: URI → the sessions subscribed, reference-counted across the
 * sessions sharing the instance. The upstream hears of a URI once (the first subscriber) and is told to
 * drop it once (the last one out); a modern upstream instead gets the whole set on its listen stream.
 */
export class ResourceSubscriptions {
  /** Looked up by an update's URI and its parents (see SubscribedUris): an update of a sub-resource is the subscription's. */
  readonly #map = new SubscribedUris<Set<UpstreamCaller>>();
  /** URI → the first subscribe to it still on its way upstream, which later subscribers join. */
  readonly #first = new Map<string, Promise<void>>();
  /** URI → the last one out's unsubscribe still on its way upstream, which a new first subscribe waits for. */
  readonly #leaving = new Map<string, Promise<void>>();
  /** A modern upstream's: URIs asked on the listen stream whose acknowledgement is awaited (see #acknowledged). */
  readonly #asking = new Set<string>();
  /** Waiting for the acknowledgement of the listen stream opened last (one opened since replaced the one they asked on). */
  #waiting: Acknowledgement[] = [];
  readonly #link: SubscriptionLink;

  constructor(link: SubscriptionLink) {
    this.#link = link;
  }

  uris(): string[] {
    return [...this.#map.keys()];
  }

  /** What a modern upstream's listen stream asks for: the subscribed URIs and those still being asked. */
  listening(): string[] {
    return [...new Set([...this.#map.keys(), ...this.#asking])];
  }

  /** The current listen stream's acknowledgement: its `resourceSubscriptions` are the URIs honoured. */
  acknowledged(notifications: Record<string, unknown>): void {
    const uris = notifications.resourceSubscriptions;
    const honoured = new Set(Array.isArray(uris) ? uris.filter((u): u is string => typeof u === 'string') : []);
    for (const settle of this.#waiting.splice(0)) settle(honoured);
  }

  /** The current listen stream was refused (or failed) before its acknowledgement. */
  refused(err: Error): void {
    for (const settle of this.#waiting.splice(0)) settle(err);
  }

  /**
   * Who hears an update of `uri`: the sessions subscribed to it or to a URI it is a sub-resource of (see
   * isSubResource), each once. One subscribed to both a parent and its child hears the child's update once,
   * not twice; a set is made only when more than one subscribed URI covers the update.
   */
  subscribers(uri: string): ReadonlySet<UpstreamCaller> {
    let found: Set<UpstreamCaller> | undefined;
    let union: Set<UpstreamCaller> | undefined;
    this.#map.covering(uri, (callers) => {
      if (!found) found = callers;
      else for (const c of callers) (union ??= new Set(found)).add(c);
    });
    return union ?? found ?? NO_SUBSCRIBERS;
  }

  async subscribe(uri: string, caller: UpstreamCaller, o: { callerRequestId?: RequestId | undefined; signal?: Cancellation | undefined; params?: Record<string, unknown> | undefined }): Promise<void> {
    // The last one out's unsubscribe still on its way: sent now, the subscribe could be served first (an
    // upstream serving requests concurrently answered it "already subscribed", then dropped the URI), and
    // the new subscriber heard nothing of it again. Bounded by that request's own timeout.
    for (let leaving = this.#leaving.get(uri); !this.#map.has(uri) && leaving; leaving = this.#leaving.get(uri)) await leaving;
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
    const first = this.#link.isModern()
      ? this.#acknowledged(uri, caller)
      : this.#link.request('resources/subscribe', o.params ?? { uri }, { caller, callerRequestId: o.callerRequestId, signal: o.signal }).then(() => void this.#map.set(uri, new Set([caller])));
    this.#first.set(uri, first);
    try {
      await first;
    } finally {
      this.#first.delete(uri);
    }
  }

  /**
   * A modern upstream hears of `uri` on a listen stream opened again, and honours it or not in that
   * stream's acknowledgement: left out, the subscribe fails (the client would wait for updates that never
   * come). Bounded by the upstream's requestTimeoutMs, as a 2025 upstream's resources/subscribe is.
   */
  async #acknowledged(uri: string, caller: UpstreamCaller): Promise<void> {
    const { name, requestTimeoutMs } = this.#link.upstream();
    this.#asking.add(uri);
    try {
      const honoured = await new Promise<ReadonlySet<string>>((resolve, reject) => {
        const timer = setTimeout(() => settle(new GatewayError('SWB_UPSTREAM_TIMEOUT', `upstream "${name}" did not acknowledge its subscriptions/listen within ${requestTimeoutMs} ms`, { upstream: name })), requestTimeoutMs);
        const settle: Acknowledgement = (r) => {
          clearTimeout(timer);
          this.#waiting = this.#waiting.filter((w) => w !== settle);
          if (r instanceof Error) reject(r);
          else resolve(r);
        };
        this.#waiting.push(settle);
        this.#link.relisten();
      });
      if (!honoured.has(uri)) throw new JsonRpcError(ErrorCode.InvalidParams, `upstream "${name}" did not accept a subscription to ${uri}: its updates would never come; read the resource instead`, { upstream: name, uri });
      this.#map.set(uri, new Set([caller]));
    } finally {
      this.#asking.delete(uri);
    }
  }

  /** Drops a session's subscription; the last one out tells the upstream (best effort). */
  async unsubscribe(uri: string, caller: UpstreamCaller, signal?: Cancellation): Promise<void> {
    const subscribers = this.#map.get(uri);
    if (!subscribers?.delete(caller) || subscribers.size > 0) return;
    this.#map.delete(uri);
    if (this.#link.isModern()) return this.#link.relisten();
    const leaving = this.#link.request('resources/unsubscribe', { uri }, { signal }).then(
      () => {},
      () => {},
    );
    this.#leaving.set(uri, leaving);
    // Registered before any subscribe's wait: an entry that is over is gone when the subscribe looks again.
    void leaving.then(() => this.#leaving.get(uri) === leaving && this.#leaving.delete(uri));
    await leaving;
  }
}
