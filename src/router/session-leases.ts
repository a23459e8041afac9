import type { UpstreamCaller, UpstreamInstance, UpstreamPool } from '../upstream/index.js';
import { LatestThrottle } from '../observability/latest-throttle.js';
import type { EndpointView } from './endpoint-view.js';

/** The client's roots/list_changed passed on as they come (a few), then one a second: see rootsChanged. */
const ROOTS_BURST = 3;
const ROOTS_PER_SECOND = 1;

/**
 * The instances one session holds for its life (per-session upstreams), each with the pool it came
 * from: after a reload the endpoint may name another pool by the same name, and a lease goes back to
 * the pool that gave it.
 */
export class SessionLeases {
  readonly #endpoint: EndpointView;
  readonly #caller: UpstreamCaller;
  /** Upstream name → instance. */
  readonly instances: Map<string, UpstreamInstance>;
  readonly #pools = new Map<string, UpstreamPool>();
  readonly #rootsChanged = new LatestThrottle<undefined>(() => {
    for (const inst of this.instances.values()) inst.notify('notifications/roots/list_changed', undefined);
  }, ROOTS_PER_SECOND, ROOTS_BURST);

  constructor(endpoint: EndpointView, caller: UpstreamCaller, leases: Map<string, UpstreamInstance>, from?: ReadonlyMap<string, UpstreamPool>) {
    this.#endpoint = endpoint;
    this.#caller = caller;
    this.instances = leases;
    for (const name of leases.keys()) this.#pools.set(name, from?.get(name) ?? endpoint.pool(name)!);
  }

  get(name: string): UpstreamInstance | undefined {
    return this.instances.get(name);
  }

  /**
   * The endpoint was reconfigured by a reload. Leases on pools it no longer uses under their name (an
   * upstream removed from it, or replaced) are handed back for the caller to release once their calls
   * in flight are done; per-session upstreams new to the session are leased now.
   */
  async rebind(closed: () => boolean): Promise<Array<{ pool: UpstreamPool; inst: UpstreamInstance }>> {
    const stale: Array<{ pool: UpstreamPool; inst: UpstreamInstance }> = [];
    for (const [name, inst] of this.instances) {
      const pool = this.#pools.get(name)!;
      if (this.#endpoint.pool(name) === pool) continue;
      stale.push({ pool, inst });
      this.instances.delete(name);
      this.#pools.delete(name);
    }
    const fresh = this.#endpoint.pools.filter((p) => !this.#pools.has(p.name));
    const settled = await Promise.allSettled(fresh.map((p) => p.lease(this.#caller)));
    settled.forEach((r, i) => {
      const pool = fresh[i]!;
      if (r.status === 'rejected') {
        this.#endpoint.logger.warn({ upstream: pool.name, err: (r.reason as Error).message }, 'reload: no instance for this session; its calls to the upstream fail');
      } else if (r.value && (closed() || this.#endpoint.pool(pool.name) !== pool)) {
        stale.push({ pool, inst: r.value });
      } else if (r.value) {
        this.instances.set(pool.name, r.value);
        this.#pools.set(pool.name, pool);
      }
    });
    return stale;
  }

  /**
   * The client's roots changed: its per-session instances are told (only their roots are this client's).
   * A notification takes no requestsPerSecond token, and each was passed on, so a client sending them in a
   * loop had the gateway write as many to its processes, and a server that asks for roots again on each
   * (server-everything) sent as many roots/list back through the gateway, each written to the session's
   * event log (Redis, with replicas). Each says only "ask again": those over the rate are folded into one.
   */
  rootsChanged(): void {
    this.#rootsChanged.offer(undefined);
  }

  async releaseAll(): Promise<void> {
    this.#rootsChanged.close();
    await Promise.all([...this.instances].map(([name, inst]) => this.#pools.get(name)!.release(inst)));
    this.instances.clear();
    this.#pools.clear();
  }
}
