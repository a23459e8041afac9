import type { CurationConfig, ToolsConfig } from '../config/tools-schema.js';
import { globMatch } from '../jsonrpc/glob.js';
import { coversAllUnder, mayMatchUnder } from '../policy/upstream-reach.js';
import { hasToolNameChars } from './names.js';

type Override = CurationConfig['overrides'][string];

/** One curation layer: which canonical names it admits, and what it changes of each. */
class Layer {
  readonly #include: readonly string[] | undefined;
  readonly #exclude: readonly string[];
  readonly overrides: Readonly<Record<string, Override>>;

  constructor(c: CurationConfig) {
    this.#include = c.include;
    this.#exclude = c.exclude;
    this.overrides = c.overrides;
  }

  get empty(): boolean {
    return this.#include === undefined && this.#exclude.length === 0 && Object.keys(this.overrides).length === 0;
  }

  admits(canonical: string): boolean {
    if (this.#include && !this.#include.some((g) => globMatch(g, canonical))) return false;
    return !this.#exclude.some((g) => globMatch(g, canonical));
  }

  /** Whether some canonical name under `prefix` may be admitted (errs towards yes: see upstream-reach.ts). */
  mayAdmitUnder(prefix: string): boolean {
    if (this.#include && !this.#include.some((g) => mayMatchUnder(g, prefix))) return false;
    return !this.#exclude.some((g) => coversAllUnder(g, prefix));
  }
}

/**
 * The curated view of an endpoint's tools for one audience: the endpoint's include/exclude globs and
 * overrides, and on top of them a tenant's own (both must admit a tool; the tenant's override fields
 * win). Everything is keyed by the canonical name, the one tenant policy matches, so a rename or a
 * shortened name never changes what a policy rule means.
 */
export class Curation {
  /** "" for the endpoint's own curation, else the tenant it is for: tells cached views apart. */
  readonly key: string;
  readonly #layers: readonly Layer[];
  /** Merged overrides, by canonical name. */
  readonly #overrides = new Map<string, Override>();
  /** Nothing to curate: calls and lists pass by name as they are (the fast path). */
  readonly empty: boolean;

  constructor(key: string, layers: readonly CurationConfig[]) {
    this.key = key;
    this.#layers = layers.map((c) => new Layer(c));
    this.empty = this.#layers.every((l) => l.empty);
    for (const l of this.#layers) {
      for (const [canonical, o] of Object.entries(l.overrides)) {
        const before = this.#overrides.get(canonical);
        this.#overrides.set(canonical, { ...before, ...o, annotations: before?.annotations || o.annotations ? { ...before?.annotations, ...o.annotations } : undefined });
      }
    }
  }

  /** The endpoint's curation, and one per tenant that has its own. */
  static forEndpoint(tools: ToolsConfig): { common: Curation; tenants: Map<string, Curation> } {
    const common = new Curation('', [tools]);
    const tenants = new Map(Object.entries(tools.tenants).map(([t, c]) => [t, new Curation(t, [tools, c])]));
    return { common, tenants };
  }

  admits(canonical: string): boolean {
    return this.#layers.every((l) => l.admits(canonical));
  }

  /**
   * Whether this view may hold a tool of an upstream (`prefix`: "<upstream>__" on an endpoint that prefixes, else
   * ""), as far as the globs tell without its catalogue: one it cannot is no part of a search-mode answer.
   */
  mayShowUnder(prefix: string): boolean {
    return this.#layers.every((l) => l.mayAdmitUnder(prefix));
  }

  renameOf(canonical: string): string | undefined {
    return this.#overrides.get(canonical)?.name;
  }

  /**
   * Whether a tool of this canonical name is listed at all: by its rename (a valid name: the config schema's
   * rule), or by its own when its characters keep to the MCP rule (length is what shortening fixes). Lists,
   * calls (one not listed is unknown), views and the catalogue check all ask this.
   */
  listable(canonical: string): boolean {
    return hasToolNameChars(canonical) || this.renameOf(canonical) !== undefined;
  }

  /**
   * The canonical name a rename stands for (overrides are few: a config's, read on a call by name). Not one
   * this curation leaves out (the endpoint's rename of a tool a tenant's layer excludes): that name is no
   * name of this audience's view, and a call by it must be judged, routed and audited as the unknown name it is.
   */
  canonicalOf(exposed: string): string | undefined {
    for (const [canonical, o] of this.#overrides) if (o.name === exposed) return this.admits(canonical) ? canonical : undefined;
    return undefined;
  }

  /** The tool as clients see it: its exposed name and overridden texts; schemas untouched. */
  apply(definition: Record<string, unknown>, canonical: string, exposed: string): Record<string, unknown> {
    const o = this.#overrides.get(canonical);
    if (!o) return definition.name === exposed ? definition : { ...definition, name: exposed };
    const out: Record<string, unknown> = { ...definition, name: exposed };
    if (o.title !== undefined) out.title = o.title;
    if (o.description !== undefined) out.description = o.description;
    if (o.annotations) out.annotations = { ...(definition.annotations as Record<string, unknown> | undefined), ...o.annotations };
    return out;
  }
}
