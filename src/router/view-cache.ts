/** The upstreams an endpoint reaches, each with the instances it has now (UpstreamPool has both). */
export type LiveInstances = () => Iterable<{ readonly name: string; readonly instances: Iterable<object> }>;

/** Below this many views the cache is not swept: a sweep walks every instance of the endpoint. */
const MIN_SWEEP = 8;

interface Entry<V> {
  readonly view: V;
  /** "<upstream>:<digest>" of each catalogue the view was built from. */
  readonly parts: readonly string[];
}

/**
 * Tool views by what determines them (a curation and the content of each upstream's catalogue), kept
 * while they are live: while every catalogue a view was built from is what some instance of its
 * upstream listed last. A fixed number of views per curation (4) was too few where instances disagree
 * (a per-tenant upstream whose tools depend on the tenant's credentials, per-session ones, a call's
 * partial view while another upstream lists slowly): a fifth variant evicted one still in use, and an
 * endpoint with more tenants than that rebuilt a view and its index on every request. Now what is
 * live stays, however many variants there are, and only views of catalogues no instance holds any
 * more (listed before a change, or of an instance gone) are let go. A sweep runs when the cache has
 * doubled since the last one, so its cost, a walk over the endpoint's instances, is spread over as
 * many builds as views it kept.
 */
export class ViewCache<V> {
  readonly #live: LiveInstances | undefined;
  readonly #entries = new Map<string, Entry<V>>();
  /** Per instance, the part ("<upstream>:<digest>") its catalogue had when last seen. */
  readonly #seen = new WeakMap<object, string>();
  /** Views kept by the last sweep. */
  #kept = 0;

  /** `live`: without it (a view of catalogues not listed by instances) nothing is let go. */
  constructor(live?: LiveInstances) {
    this.#live = live;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: string): V | undefined {
    return this.#entries.get(key)?.view;
  }

  /** `instance` listed the catalogue named by `part`: what it listed before is no longer live through it. */
  saw(instance: object, part: string): void {
    this.#seen.set(instance, part);
  }

  set(key: string, parts: readonly string[], view: V): void {
    if (this.#live && this.#entries.size >= Math.max(MIN_SWEEP, 2 * this.#kept)) this.#sweep(this.#live);
    this.#entries.set(key, { view, parts });
  }

  #sweep(live: LiveInstances): void {
    const held = new Set<string>();
    for (const upstream of live()) {
      for (const inst of upstream.instances) {
        const part = this.#seen.get(inst);
        if (part !== undefined) held.add(part);
      }
    }
    for (const [key, e] of this.#entries) if (!e.parts.every((p) => held.has(p))) this.#entries.delete(key);
    this.#kept = this.#entries.size;
  }
}
