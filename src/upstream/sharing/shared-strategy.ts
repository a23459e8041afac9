import { GatewayError } from '../../errors.js';
import type { UpstreamInstance } from '../upstream-instance.js';
import type { InstanceSource, SharingStrategy } from './sharing-strategy.js';
import { awaitsUser } from '../upstream-user.js';

/**
 * `shared`: `pool.size` instances started up front serve every session; each request goes to the
 * least busy ready one. Also one tenant's instances in `per-tenant` mode.
 */
export class SharedStrategy implements SharingStrategy {
  readonly #source: InstanceSource;
  readonly #context: Record<string, unknown>;
  readonly #instances = new Set<UpstreamInstance>();
  #rr = 0;

  constructor(source: InstanceSource, context: Record<string, unknown> = {}) {
    this.#source = source;
    this.#context = context;
  }

  get instances(): ReadonlySet<UpstreamInstance> {
    return this.#instances;
  }

  get movable(): boolean {
    return true;
  }

  get ready(): boolean {
    for (const i of this.#instances) if (i.state === 'ready') return true;
    return false;
  }

  get waiting(): number {
    return 0;
  }

  async start(): Promise<void> {
    const started: Promise<unknown>[] = [];
    for (let i = 0; i < this.#source.config.pool.size; i++) {
      const inst = this.#source.create({ ...this.#context, instance: this.#instances.size });
      this.#instances.add(inst);
      started.push(inst.start().catch(() => {}));
    }
    await Promise.all(started);
  }

  async lease(): Promise<undefined> {
    return undefined;
  }

  async release(): Promise<void> {}

  /** The ready instance with the fewest requests in flight (round robin among equals). */
  pick(): UpstreamInstance {
    let best: UpstreamInstance | undefined;
    let bestRotated = false;
    // Ties go to the first seen; rotating the start spreads equal load without copying the set.
    const start = this.#rr++ % Math.max(1, this.#instances.size);
    let k = 0;
    for (const inst of this.#instances) {
      const rotated = k++ < start;
      if (inst.state !== 'ready' && inst.state !== 'starting') continue;
      // Prefer available instances (ready, circuit admitting, not deferring after a Retry-After); fall back to the others,
      // which refuse with their reason (a pool throttled everywhere: SWB_UPSTREAM_THROTTLED, the soonest deferral's).
      if (
        !best ||
        (!best.available && inst.available) ||
        (inst.available === best.available && ((inst.available ? undefined : deferredSooner(inst, best)) ?? (inst.inflight < best.inflight || (inst.inflight === best.inflight && !rotated && bestRotated))))
      ) {
        best = inst;
        bestRotated = rotated;
      }
    }
    if (!best) return this.#awaitingConsent() ?? throwError(this.#unavailable());
    return best;
  }

  /** An instance that failed only for want of the user's consent, started again now (see retryConsent). */
  #awaitingConsent(): UpstreamInstance | undefined {
    for (const inst of this.#instances) if (inst.retryConsent()) return inst;
    return undefined;
  }

  /**
   * Why none can serve, the same whatever the instances' order (the first failed one's hid another's): a failure only
   * someone's action ends (see actionNeeded) before one that waiting ends; then the soonest throttled restart's; then "restarting".
   */
  #unavailable(): GatewayError {
    const name = this.#source.config.name;
    let acted: UpstreamInstance | undefined;
    let rank = 0;
    let soonest: GatewayError | undefined;
    let why: string | undefined;
    for (const inst of this.#instances) {
      const r = actionNeeded(inst);
      if (r > rank) [acted, rank] = [inst, r];
      // Those waiting out a start their upstream throttled: when to retry, as a throttled call is told (not "retry shortly"),
      // the soonest restart's (the first instance's was told, "retry in 30 s" while another was back in 2).
      const throttled = inst.startThrottling();
      if (throttled && !(Number(soonest?.details?.retryAfterSeconds) <= Number(throttled.details?.retryAfterSeconds))) soonest = throttled;
      why ??= inst.lastFailure;
    }
    // Neither era works: a restart will not change the upstream's protocol, so no "retry shortly".
    if (acted && rank === INCOMPATIBLE) return new GatewayError('SWB_UPSTREAM_PROTOCOL', acted.lastFailure!, { upstream: name, incompatible: true });
    // A per-user credential the authorization server refused, or the user's consent awaited: the user hears that, not "retry in 30 s".
    if (acted) return acted.lastError!;
    if (soonest) return soonest;
    return new GatewayError(
      'SWB_UPSTREAM_UNAVAILABLE',
      why ? `upstream "${name}" has no running instance (${why}); it is restarting, retry shortly` : `upstream "${name}" has no running instance; it is restarting, retry shortly`,
      { upstream: name },
    );
  }

  /** A shared instance's state is every session's: a pool-wide request goes to each ready one. */
  instancesFor(): UpstreamInstance[] {
    return [...this.#instances].filter((i) => i.state === 'ready');
  }

  serves(_caller: unknown, inst: UpstreamInstance): boolean {
    return this.#instances.has(inst);
  }

  /** An instance that speaks for everyone (the catalogue check): the first ready one, without moving the rotation. */
  common(): UpstreamInstance | undefined {
    for (const inst of this.#instances) if (inst.state === 'ready') return inst;
    return undefined;
  }

  drain(): void {}

  async close(): Promise<void> {
    await Promise.all([...this.#instances].map((i) => i.stop()));
    this.#instances.clear();
  }
}

const INCOMPATIBLE = 3;

/**
 * How much an instance's failure needs someone to act (0: waiting ends it, as a throttled or crashed start's); the
 * highest is told, so that no action asked of the user leaves the call failing on what was behind it. No era spoken
 * (an operator, on the upstream: no credential or consent makes it usable), then a refused credential (consenting
 * again would not help), then the user's consent awaited (retryConsent restarts such an instance on a pick already).
 */
function actionNeeded(inst: UpstreamInstance): number {
  if (inst.incompatible) return INCOMPATIBLE;
  if (inst.lastError?.code === 'SWB_UPSTREAM_CREDENTIAL_REFUSED') return 2;
  return awaitsUser(inst.lastError) ? 1 : 0;
}

/** Both deferring calls after a Retry-After: whether `a`'s deferral ends first (what the caller is told). undefined: not both. */
function deferredSooner(a: UpstreamInstance, b: UpstreamInstance): boolean | undefined {
  const now = performance.now();
  return a.deferredUntil > now && b.deferredUntil > now ? a.deferredUntil < b.deferredUntil : undefined;
}

function throwError(err: Error): never {
  throw err;
}
