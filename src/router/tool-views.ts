import { createHash } from 'node:crypto';
import type { ToolsConfig } from '../config/tools-schema.js';
import { isJsonObject } from '../jsonrpc/types.js';
import { clipped } from '../observability/clipped.js';
import type { Logger } from '../observability/logger.js';
import { Curation } from './curation.js';
import { CALL_TOOL, SEARCH_TOOLS } from './meta-tools.js';
import { SemanticRanker, type EmbeddingsObserver } from './semantic-ranker.js';
import { ToolView } from './tool-view.js';
import { ViewCache, type LiveInstances } from './view-cache.js';

type Catalogue = ReadonlyMap<string, Record<string, unknown>>;

/** Misnamed tools one warning quotes by name (the rest are counted), and the longest name it quotes (MCP's limit). */
const MAX_MISNAMED_QUOTED = 100;
const MAX_NAME = 128;
/** Shortened names remembered per curation (see #shortened): past this the memory starts over, from the next view built. */
const MAX_SHORTENED = 10_000;

export interface ToolViewsOptions {
  /** Hybrid search's observer (tools.embeddings). */
  embeddings?: EmbeddingsObserver | undefined;
  /** The views a reload replaces: the vectors already fetched are kept when the provider's URL, model and dimensions did not change. */
  previous?: ToolViews | undefined;
  /** The endpoint's upstreams and their instances now: what tells a live view from a stale one (see ViewCache). */
  live?: LiveInstances | undefined;
}

/**
 * An endpoint's tool views, one per catalogue version and curation, shared by every session and
 * request on this endpoint. A version is the content of each upstream's catalogue: instances that list
 * the same tools (a shared pool's connections, every replica) give the same digest, so the view (and
 * its index) is built once per catalogue change, never per session or per request, and kept as long
 * as some instance lists that version (however many tenants' or sessions' versions there are). Whatever
 * a caller may see is decided on the view's results, not in it: one view serves every tenant.
 */
export class ToolViews {
  readonly exposure: ToolsConfig['exposure'];
  readonly maxNameLength: number;
  /** tools.maxSearchAnswerChars: the longest search_tools answer (see session/search-answer.ts). */
  readonly maxSearchAnswerChars: number;
  readonly #prefixNames: boolean;
  readonly #logger: Logger;
  readonly #common: Curation;
  readonly #tenants: Map<string, Curation>;
  /** Each catalogue object's digest, computed once per object (an instance keeps its object until the list changes). */
  readonly #digests = new WeakMap<Catalogue, string>();
  readonly #views: ViewCache<ToolView>;
  /**
   * Per curation (its key), the canonical name of each name shortened to maxToolNameLength in the views built:
   * what the edge's step-up check judges a call by such a name by, without the tool list (see judged). The
   * same in every view but for a clash's extra digits: a shortened name is made from its canonical name alone.
   */
  readonly #shortened = new Map<string, Map<string, string>>();
  /** Hybrid search's embeddings (tools.embeddings), shared by every view of the endpoint. */
  readonly semantic: SemanticRanker | undefined;

  constructor(tools: ToolsConfig, prefixNames: boolean, logger: Logger, { embeddings, previous, live }: ToolViewsOptions = {}) {
    this.exposure = tools.exposure;
    const e = tools.embeddings;
    const kept = previous?.semantic;
    this.semantic = e === undefined || tools.exposure === 'all' ? undefined : new SemanticRanker(e, logger, embeddings, kept);
    this.#views = new ViewCache(live);
    this.maxNameLength = tools.maxToolNameLength;
    this.maxSearchAnswerChars = tools.maxSearchAnswerChars;
    this.#prefixNames = prefixNames;
    this.#logger = logger;
    const { common, tenants } = Curation.forEndpoint(tools);
    this.#common = common;
    this.#tenants = tenants;
  }

  /** search_tools and call_tool stand in for the catalogue in tools/list. */
  get searchMode(): boolean {
    return this.exposure !== 'all';
  }

  /** What a tenant's sessions see of the catalogue. */
  curationFor(tenant: string): Curation {
    return this.#tenants.get(tenant) ?? this.#common;
  }

  /**
   * The tools/call params tenant policy judges, as far as the name tells without the tool list: on a search-mode
   * endpoint call_tool's inner name, a rename's canonical name, and a shortened name's as the views built so far
   * gave it (before any, judged as sent). What the edge's step-up check (403 insufficient_scope) must judge, as
   * the policy stage will: judged as sent, the rule its stem matched decided, another rule's scope asked of a tool
   * the caller's list showed it, or none of one whose own rule asks a scope.
   */
  judged(tenant: string, params: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
    const wrapped = this.searchMode && params?.name === CALL_TOOL ? params.arguments : undefined;
    const name = wrapped === undefined ? params?.name : isJsonObject(wrapped) ? wrapped.name : undefined;
    if (typeof name !== 'string') return params;
    const curation = this.curationFor(tenant);
    const canonical = curation.canonicalOf(name) ?? (name.length === this.maxNameLength ? this.#shortened.get(curation.key)?.get(name) : undefined) ?? name;
    if (canonical === params!.name) return params;
    // With the arguments the call runs with: a refusal's audit line is the direct call's (their hash included).
    return { name: canonical, arguments: wrapped === undefined ? params!.arguments : (wrapped as Record<string, unknown>).arguments };
  }

  /** Every curation of the endpoint: its own, and each tenant's that has a layer of its own (what a catalogue change prepares). */
  get curations(): Curation[] {
    return [this.#common, ...this.#tenants.values()];
  }

  /** Whether a tenant's view differs from what everyone else on this endpoint sees (then no public caching). */
  curatesFor(tenant: string): boolean {
    return this.#tenants.has(tenant);
  }

  #digest(catalogue: Catalogue): string {
    let d = this.#digests.get(catalogue);
    if (d === undefined) {
      const h = createHash('sha256');
      for (const name of [...catalogue.keys()].sort()) h.update(JSON.stringify(catalogue.get(name))).update('\n');
      d = h.digest('base64url');
      this.#digests.set(catalogue, d);
    }
    return d;
  }

  /** The names are the upstream's, as many and as long as it lists: the warning quotes a bounded part of them. */
  #warnMisnamed(curation: Curation, misnamed: readonly string[]): void {
    const tools = misnamed.slice(0, MAX_MISNAMED_QUOTED).map((n) => clipped(n, MAX_NAME));
    const more = misnamed.length > tools.length ? misnamed.length - tools.length : undefined;
    this.#logger.warn({ curation: curation.key || undefined, tools, more }, 'tools left out of search: their name breaks the MCP name rule (only [A-Za-z0-9_.-])');
  }

  #noteShortened(curation: Curation, view: ToolView): void {
    let known = this.#shortened.get(curation.key);
    for (const t of view.tools) {
      if (t.rename !== undefined || t.name === t.canonical) continue;
      if (known === undefined) this.#shortened.set(curation.key, (known = new Map()));
      if (known.size >= MAX_SHORTENED) known.clear();
      known.set(t.name, t.canonical);
    }
  }

  /** Views held now (live ones, and stale ones until the next sweep). */
  get size(): number {
    return this.#views.size;
  }

  /**
   * The view of these catalogues (upstream → its tools) under a curation: cached by their content.
   * `sources`: the instance each catalogue came from (upstream → instance), what keeps its view live.
   */
  view(curation: Curation, catalogues: ReadonlyMap<string, Catalogue>, sources?: ReadonlyMap<string, object>): ToolView {
    const parts: string[] = [];
    for (const [u, c] of catalogues) {
      const part = `${u}:${this.#digest(c)}`;
      parts.push(part);
      const inst = sources?.get(u);
      if (inst) this.#views.saw(inst, part);
    }
    const key = `${JSON.stringify(curation.key)}${parts.join(',')}`;
    const cached = this.#views.get(key);
    if (cached) return cached;
    const started = performance.now();
    const view = new ToolView({ catalogues, curation, maxNameLength: this.maxNameLength, prefixNames: this.#prefixNames, reserved: this.searchMode ? [SEARCH_TOOLS, CALL_TOOL] : [], passNames: !this.#prefixNames && !this.searchMode, semantic: this.semantic });
    this.#views.set(key, parts, view);
    this.#noteShortened(curation, view);
    const renamed = view.tools.filter((t) => t.name !== t.canonical).map((t) => `${t.name} → ${t.canonical}`);
    this.#logger.info({ curation: curation.key || undefined, tools: view.tools.length, renamed: renamed.length > 0 ? renamed : undefined, ms: Math.round((performance.now() - started) * 100) / 100 }, 'tool catalogue view built');
    if (view.shadowed.length > 0) this.#logger.warn({ curation: curation.key || undefined, tools: view.shadowed }, 'tools left out: their exposed name is taken by a rename or a search meta-tool');
    // Exposure all says so per tool as it lists (warnBadToolName); a search-mode endpoint never lists an upstream's tools, so its views do, once per version.
    if (this.searchMode && view.misnamed.length > 0) this.#warnMisnamed(curation, view.misnamed);
    return view;
  }
}
