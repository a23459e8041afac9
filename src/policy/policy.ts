import { sameValue } from '../config/config-diff.js';
import type { Config } from '../config/schema.js';
import type { Principal } from '../auth/principal.js';
import { ALLOW_ALL, TenantPolicy } from './tenant-policy.js';
import type { LimitCounters } from './limit-counters.js';
import type { SessionSlots } from './session-slots.js';

/** Every tenant's policy, the shared limit counters and the tenants' session slots. */
export class Policy {
  #tenants = new Map<string, TenantPolicy>();
  #open: TenantPolicy | undefined;
  readonly counters: LimitCounters;
  readonly slots: SessionSlots;

  constructor(config: Pick<Config, 'tenants' | 'auth'>, counters: LimitCounters, slots: SessionSlots) {
    this.counters = counters;
    this.slots = slots;
    this.replace(config);
  }

  /**
   * A reload's tenants, in force for the next request (one assignment, so never half of each). A tenant
   * whose settings did not change keeps its compiled policy: sessions holding it see no difference.
   * Compared as the reload's diff compares them (sameValue: key order aside): as JSON text, a schema
   * written in another key order made a new policy, and its sessions were told to re-list for nothing.
   */
  replace(config: Pick<Config, 'tenants' | 'auth'>): void {
    const tenants = new Map<string, TenantPolicy>();
    for (const t of config.tenants) {
      const old = this.#tenants.get(t.name);
      tenants.set(t.name, old && sameValue(old.config, t) ? old : new TenantPolicy(t));
    }
    // Auth off: one anonymous tenant; unconfigured, it may do everything (loopback only, warned at start).
    this.#open = config.auth.mode === 'none' && !tenants.has('anonymous') ? (this.#open ?? new TenantPolicy(ALLOW_ALL)) : undefined;
    const before = this.#tenants;
    this.#tenants = tenants;
    // A tenant removed, or its rate: its bucket would be kept for the process's life (a tenant added back
    // later starts full, as a new one does).
    for (const [name, t] of before) {
      if (t.config.limits.requestsPerSecond !== undefined && tenants.get(name)?.config.limits.requestsPerSecond === undefined) this.counters.forget?.(`rate:${name}`);
    }
  }

  /** Every configured tenant's policy (operators' views). */
  tenants(): TenantPolicy[] {
    return [...this.#tenants.values()];
  }

  /** The tenant's policy, or undefined when the tenant is not configured (deny everything). */
  tenant(principal: Pick<Principal, 'tenant'>): TenantPolicy | undefined {
    return this.#tenants.get(principal.tenant) ?? this.#open;
  }

  /**
   * Request-rate limit for `requests` JSON-RPC requests (a 2025-03-26 batch counts each), taken all or
   * none: 0, or milliseconds to wait. More requests than the burst can never be covered: Infinity.
   */
  admit(principal: Principal, requests = 1): number | Promise<number> {
    const t = this.tenant(principal);
    const rps = t?.config.limits.requestsPerSecond;
    if (!t || rps === undefined) return 0;
    const burst = t.config.limits.burst ?? Math.max(1, Math.ceil(rps));
    return requests > burst ? Infinity : this.counters.take(`rate:${t.name}`, rps, burst, requests);
  }
}
