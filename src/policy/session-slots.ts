/** A slot opened, or refused with how long until the tenant's first held slot is due to expire. */
export type SlotAnswer = { opened: true } | { opened: false; retryAfterMs: number };

/**
 * The sessions a tenant holds, each with the moment it expires unless used again. Counting them is the
 * session limit; their expiries are what a refused client is told to wait for (Retry-After): a slot of
 * a client that never sent DELETE frees only when its session times out, so "retry in 5 s" would be a lie.
 * Memory here; the Redis store implements the same interface so the limit holds across replicas.
 */
export interface SessionSlots {
  /**
   * Renewals closer together than this are not written (a remote store is not told of every message);
   * an expiry it reports can be this much early. 0: every renewal counts.
   */
  readonly precisionMs: number;
  /** Opens `id`'s slot, due to expire `expiresInMs` from now, unless the tenant holds `max` already. */
  open(tenant: string, id: string, max: number, expiresInMs: number): SlotAnswer | Promise<SlotAnswer>;
  /** The session was used (or is busy): it now expires `expiresInMs` from now. */
  renew(tenant: string, id: string, expiresInMs: number): void;
  close(tenant: string, id: string): void;
}

/** One replica's slots: tenant → session id → when it expires (epoch ms). */
export class MemorySessionSlots implements SessionSlots {
  readonly precisionMs = 0;
  readonly #tenants = new Map<string, Map<string, number>>();

  open(tenant: string, id: string, max: number, expiresInMs: number): SlotAnswer {
    let held = this.#tenants.get(tenant);
    if (!held) this.#tenants.set(tenant, (held = new Map()));
    const now = Date.now();
    if (!held.has(id) && held.size >= max) {
      let next = Infinity;
      for (const due of held.values()) next = Math.min(next, due);
      return { opened: false, retryAfterMs: Math.max(0, next - now) };
    }
    held.set(id, now + expiresInMs);
    return { opened: true };
  }

  renew(tenant: string, id: string, expiresInMs: number): void {
    const held = this.#tenants.get(tenant);
    if (held?.has(id)) held.set(id, Date.now() + expiresInMs);
  }

  close(tenant: string, id: string): void {
    const held = this.#tenants.get(tenant);
    if (!held) return;
    held.delete(id);
    if (held.size === 0) this.#tenants.delete(tenant);
  }
}
