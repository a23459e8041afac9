/**
 * Sessions waiting for a per-session instance, kept per tenant. A first-come queue lets the tenant
 * that asks most often decide everyone's wait (its sessions are always at the front); here the next
 * free instance goes to the waiting tenant that holds the fewest, and among tenants that hold as many,
 * to the one served least recently (round robin).
 */
export class FairQueue<W extends { readonly tenant: string }> {
  /** tenant → its waiters, oldest first. Map order is service order: a served tenant moves to the back. */
  readonly #byTenant = new Map<string, W[]>();
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Waiters of one tenant. */
  count(tenant: string): number {
    return this.#byTenant.get(tenant)?.length ?? 0;
  }

  /** Whether some tenant with waiters passes the test. */
  anyTenant(test: (tenant: string) => boolean): boolean {
    for (const tenant of this.#byTenant.keys()) if (test(tenant)) return true;
    return false;
  }

  push(w: W): void {
    const list = this.#byTenant.get(w.tenant);
    if (list) list.push(w);
    else this.#byTenant.set(w.tenant, [w]);
    this.#size++;
  }

  /** Takes a waiter out (it gave up or timed out); false when it was not waiting. */
  remove(w: W): boolean {
    const list = this.#byTenant.get(w.tenant);
    const i = list?.indexOf(w) ?? -1;
    if (!list || i === -1) return false;
    list.splice(i, 1);
    if (list.length === 0) this.#byTenant.delete(w.tenant);
    this.#size--;
    return true;
  }

  /** Takes out every waiter `test` picks (sessions that ended while they waited), and returns them. */
  removeWhere(test: (w: W) => boolean): W[] {
    const out = [...this.#byTenant.values()].flat().filter(test);
    for (const w of out) this.remove(w);
    return out;
  }

  /**
   * The waiter to serve next, taken out of the queue: the oldest waiter of the tenant that holds the
   * fewest (by `held`), skipping tenants `eligible` refuses (at their share); ties go to the tenant
   * served least recently. Undefined when no waiting tenant may be served.
   */
  next(held: (tenant: string) => number, eligible: (tenant: string) => boolean): W | undefined {
    let best: string | undefined;
    let bestHeld = Infinity;
    for (const tenant of this.#byTenant.keys()) {
      if (!eligible(tenant)) continue;
      const h = held(tenant);
      if (h < bestHeld) {
        best = tenant;
        bestHeld = h;
      }
    }
    if (best === undefined) return undefined;
    const list = this.#byTenant.get(best)!;
    const w = list.shift()!;
    this.#byTenant.delete(best);
    if (list.length > 0) this.#byTenant.set(best, list); // to the back of the rotation
    this.#size--;
    return w;
  }

  /**
   * The queue is full and `tenant` wants a place: the newest waiter of the tenant with the most
   * waiters gives up its place when that tenant would still have at least as many waiting as `tenant`
   * then has. So one tenant cannot keep the others out of the queue by filling it.
   */
  displace(tenant: string): W | undefined {
    let most: W[] | undefined;
    for (const list of this.#byTenant.values()) if (!most || list.length > most.length) most = list;
    if (!most || most.length < this.count(tenant) + 2) return undefined;
    const w = most[most.length - 1]!;
    this.remove(w);
    return w;
  }

  /** Empties the queue (shutdown). */
  drain(): W[] {
    const all = [...this.#byTenant.values()].flat();
    this.#byTenant.clear();
    this.#size = 0;
    return all;
  }
}
