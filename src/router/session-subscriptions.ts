import { GatewayError } from '../errors.js';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import type { Cancellation } from '../jsonrpc/cancellation.js';
import type { RequestId } from '../jsonrpc/types.js';
import type { UpstreamCaller, UpstreamInstance, UpstreamPool } from '../upstream/index.js';
import { clipped } from '../observability/clipped.js';
import { withoutPassword, withoutPasswords } from '../observability/uri-password.js';
import type { EndpointView } from './endpoint-view.js';
import { resourceNotFound } from './resource-not-found.js';

type Params = Record<string, unknown> | undefined;

/**
 * The most resources one session may be subscribed to. Each is a URI in the session's record (in Redis,
 * rewritten on every subscribe), an entry in its instance's subscribers, and one resubscription at a
 * takeover: without a bound a client could grow all three for ever. A 2026-07-28 listen has its own
 * (modern.listenUrisMax).
 */
export const MAX_SUBSCRIPTIONS_PER_SESSION = 1000;

/**
 * The most characters of URIs one session's subscriptions may hold, all together. Bounded by count
 * alone, a URI was as long as a body (a template's `{var}` matches a run of any length): 1,000 URIs of a
 * megabyte each, a record of a gigabyte written whole to Redis again on every subscribe. Real URIs are
 * short: 1,000 of 256 characters fit.
 */
export const MAX_SUBSCRIBED_URI_CHARS = 256 * 1024;

/**
 * One session's resource subscriptions: each URI with the instance it was subscribed on (the one whose
 * notifications/resources/updated reach the session, and the one told when it is dropped).
 */
export class SessionSubscriptions {
  readonly #endpoint: EndpointView;
  readonly #caller: UpstreamCaller;
  readonly #closed: () => boolean;
  /** uri → instance it was subscribed on. */
  readonly #byUri = new Map<string, UpstreamInstance>();
  /** uri → a subscribe to it still on its way upstream, which an unsubscribe of the URI waits for. */
  readonly #making = new Map<string, Promise<void>>();

  constructor(endpoint: EndpointView, caller: UpstreamCaller, closed: () => boolean) {
    this.#endpoint = endpoint;
    this.#caller = caller;
    this.#closed = closed;
  }

  uris(): string[] {
    return [...this.#byUri.keys()];
  }

  has(uri: string): boolean {
    return this.#byUri.has(uri);
  }

  /** Characters of the URIs held and being subscribed to (a subscribe is no hot path: counted when asked). */
  #uriChars(): number {
    let n = 0;
    for (const uri of this.#byUri.keys()) n += uri.length;
    for (const uri of this.#making.keys()) if (!this.#byUri.has(uri)) n += uri.length;
    return n;
  }

  subscribe(uri: string, inst: UpstreamInstance, o: { params?: Params; callerRequestId?: RequestId | undefined; signal?: Cancellation | undefined }): Promise<void> {
    if (this.#byUri.size + this.#making.size >= MAX_SUBSCRIPTIONS_PER_SESSION && !this.#making.has(uri)) {
      const message = `this session is subscribed to ${MAX_SUBSCRIPTIONS_PER_SESSION} resources, the most a session may be; unsubscribe from one first`;
      return Promise.reject(new GatewayError('SWB_SUBSCRIPTION_LIMIT', message, { max: MAX_SUBSCRIPTIONS_PER_SESSION }));
    }
    const chars = this.#making.has(uri) ? 0 : this.#uriChars() + uri.length;
    if (chars > MAX_SUBSCRIBED_URI_CHARS) {
      const message = `this session's subscriptions would hold ${chars} characters of resource URIs, more than the ${MAX_SUBSCRIBED_URI_CHARS} a session may (its record keeps them); unsubscribe from one first`;
      return Promise.reject(new GatewayError('SWB_SUBSCRIPTION_LIMIT', message, { maxUriChars: MAX_SUBSCRIBED_URI_CHARS }));
    }
    // The endpoint offers subscriptions when any upstream does: one that offers none is not sent a request it did
    // not declare (it refused it -32601, as if the gateway had no resources/subscribe), and is refused as a 2026-07-28
    // upstream's unacknowledged URI is. An upstream not known yet (not started) is asked.
    const identity = inst.identity;
    if (identity && !(identity.capabilities.resources as { subscribe?: unknown } | undefined)?.subscribe) {
      const upstream = inst.config.name;
      return Promise.reject(new JsonRpcError(ErrorCode.InvalidParams, `upstream "${upstream}" offers no subscriptions to its resources: updates of ${uri} would never come; read the resource instead`, { upstream, uri }));
    }
    const making = (async () => {
      await inst.subscribe(uri, this.#caller, o).catch((err: unknown) => Promise.reject(resourceNotFound(err, uri) ?? err));
      // Closed meanwhile: close() undid only the subscriptions it knew of; this one is undone here.
      if (this.#closed()) await inst.unsubscribe(uri, this.#caller);
      else this.#byUri.set(uri, inst);
    })();
    this.#making.set(uri, making);
    const done = () => void (this.#making.get(uri) === making && this.#making.delete(uri));
    making.then(done, done);
    return making;
  }

  /**
   * Drops the session's subscription to `uri`. One still being made is waited for first: answered {} at
   * once, the unsubscribe let that subscribe land afterwards, and the client that had dropped the URI got
   * its updates for the rest of the session.
   */
  async unsubscribe(uri: string, signal?: Cancellation): Promise<void> {
    // Not awaited when none is being made: closeAll counts on the session being let go of synchronously.
    const making = this.#making.get(uri);
    if (making) await making.catch(() => {});
    const inst = this.#byUri.get(uri);
    if (!inst) return;
    this.#byUri.delete(uri);
    await inst.unsubscribe(uri, this.#caller, signal);
  }

  /**
   * A reload rebound the session: a subscription held on an instance the endpoint's pool of that name no
   * longer serves it with (the upstream was replaced, or removed from the endpoint) is dropped there and,
   * where the upstream is still the endpoint's, made again on the instance that serves the session now.
   * Left as it was, the old instance drained and stopped, nothing told the new one, and the client, whose
   * subscribe again was answered {} as already done, heard no update for the rest of the session.
   */
  async follow(instanceOf: (pool: UpstreamPool) => UpstreamInstance): Promise<void> {
    const moved = [...this.#byUri].filter(([, inst]) => !this.#endpoint.pool(inst.config.name)?.serves(this.#caller, inst));
    await Promise.all(
      moved.map(async ([uri, inst]) => {
        this.#byUri.delete(uri);
        await inst.unsubscribe(uri, this.#caller).catch(() => {});
        const pool = this.#endpoint.pool(inst.config.name);
        if (!pool || this.#closed()) return;
        // instanceOf throws when the session has no instance there (its lease failed): dropped as one that cannot be made.
        await Promise.resolve()
          .then(() => this.subscribe(uri, instanceOf(pool), {}))
          .catch((err: Error) => {
            // The URI as the audit line records it (servers name resources by connection strings), in the error too.
            this.#endpoint.logger.warn({ upstream: pool.name, uri: clipped(withoutPassword(uri), 2048), err: withoutPasswords(err.message) }, 'reload: a resource subscription could not be made on the new instance; its updates are lost');
          });
      }),
    );
  }

  /**
   * The session ended: it stops counting as a subscriber at once, and the upstream is told (the last one
   * out) without waiting for its answer, which is best effort. Awaited, an upstream that had stopped
   * answering held the client's DELETE and the gateway's stop for its requestTimeoutMs.
   */
  closeAll(): void {
    for (const uri of this.uris()) this.unsubscribe(uri).catch(() => {});
  }
}
