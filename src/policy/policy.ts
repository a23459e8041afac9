import type { Config } from '../config/schema.js';
import type { Principal } from '../auth/principal.js';
import { ALLOW_ALL, TenantPolicy } from './tenant-policy.js';
import type { LimitCounters } from './limit-counters.js';
import type { SessionSlots } from './session-slots.js';

/** Every tenant's policy, the shared limit counters and the tenants' session slots. */
export class Policy {
  readonly #tenants = new Map<string, TenantPolicy>();
  readonly #open: TenantPolicy | undefined;
  readonly counters: LimitCounters;
  readonly slots: SessionSlots;

  constructor(config: Config, counters: LimitCounters, slots: SessionSlots) {
    for (const t of config.tenants) this.#tenants.set(t.name, new TenantPolicy(t));
    this.counters = counters;
    this.slots = slots;
    // Auth off: one anonymous tenant; unconfigured, it may do everything (loopback only, warned at start).
    this.#open = config.auth.mode === 'none' && !this.#tenants.has('anonymous') ? new TenantPolicy(ALLOW_ALL) : undefined;
  }

  /** The tenant's policy, or undefined when the tenant is not configured (deny everything). */
  tenant(principal: Principal): TenantPolicy | undefined {
    return this.#tenants.get(principal.tenant) ?? this.#open;
  }

  /** Request-rate limit, checked before a request is parsed: 0, or milliseconds to wait. */
  admit(principal: Principal): number | Promise<number> {
    const t = this.tenant(principal);
    const rps = t?.config.limits.requestsPerSecond;
    if (!t || rps === undefined) return 0;
    return this.counters.take(`rate:${t.name}`, rps, t.config.limits.burst ?? Math.max(1, Math.ceil(rps)));
  }
}
