import { GatewayError } from '../../errors.js';
import type { UpstreamCaller } from '../upstream-caller.js';
import type { UpstreamInstance } from '../upstream-instance.js';
import { SharedStrategy } from './shared-strategy.js';
import type { InstanceSource, SharingStrategy } from './sharing-strategy.js';

/**
 * `per-tenant`: each tenant its own shared instances (`pool.size` of them), started with its first
 * session, so tenants never share an instance or a connection.
 */
export class PerTenantStrategy implements SharingStrategy {
  readonly #source: InstanceSource;
  readonly #tenants = new Map<string, SharedStrategy>();
  #closed = false;

  constructor(source: InstanceSource) {
    this.#source = source;
  }

  get instances(): ReadonlySet<UpstreamInstance> {
    const all = new Set<UpstreamInstance>();
    for (const t of this.#tenants.values()) for (const i of t.instances) all.add(i);
    return all;
  }

  get movable(): boolean {
    return true;
  }

  /** Instances start with their tenant's first session: nothing to wait for before that. */
  get ready(): boolean {
    return true;
  }

  get waiting(): number {
    return 0;
  }

  async start(): Promise<void> {}

  /** The tenant's instances, started on first use. */
  #of(tenant: string): SharedStrategy {
    let own = this.#tenants.get(tenant);
    if (!own) {
      if (this.#closed) throw new GatewayError('SWB_SHUTTING_DOWN', 'the gateway is shutting down');
      own = new SharedStrategy(this.#source, { tenant });
      this.#tenants.set(tenant, own);
      void own.start();
    }
    return own;
  }

  /** A session holds no instance of its own, but its tenant's start now, while it initializes. */
  async lease(caller: UpstreamCaller): Promise<undefined> {
    this.#of(caller.tenant);
    return undefined;
  }

  async release(): Promise<void> {}

  pick(caller: UpstreamCaller): UpstreamInstance {
    return this.#of(caller.tenant).pick();
  }

  instancesFor(caller: UpstreamCaller): UpstreamInstance[] {
    return this.#of(caller.tenant).instancesFor();
  }

  serves(caller: UpstreamCaller, inst: UpstreamInstance): boolean {
    return this.#tenants.get(caller.tenant)?.instances.has(inst) ?? false;
  }

  /** No catalogue is every session's: each tenant's instances start only with its sessions. */
  common(): undefined {
    return undefined;
  }

  drain(): void {
    this.#closed = true;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#tenants.values()].map((t) => t.close()));
  }
}
