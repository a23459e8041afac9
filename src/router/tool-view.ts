import { isValidToolName, prefixed } from '../jsonrpc/names.js';
import type { Curation } from './curation.js';
import { assignNames, shortName, type NameRequest } from './short-names.js';
import type { SemanticRanker } from './semantic-ranker.js';
import { ToolIndex, type Admits } from './tool-index.js';
import { words } from './search-terms.js';

type Definition = Record<string, unknown>;

/** One tool as an endpoint exposes it. */
export interface ViewTool {
  /** The name clients see and call. */
  readonly name: string;
  /** What tenant policy, argument rules, audit and metrics know it by: "<upstream>__<tool>", or "<tool>" unprefixed. */
  readonly canonical: string;
  readonly upstream: string;
  /** The upstream's own name for it. */
  readonly tool: string;
  /** The name curation gave it (then `name`), if it gave one. */
  readonly rename: string | undefined;
  /** The curated definition (exposed name, overridden texts, the upstream's schemas). */
  readonly definition: Definition;
  /** The definition as the upstream reported it: what tool pins hash. */
  readonly raw: Definition;
}

export interface ViewInput {
  /** Each upstream's tools by their own names (an upstream whose list failed is absent). */
  catalogues: ReadonlyMap<string, ReadonlyMap<string, Definition>>;
  curation: Curation;
  maxNameLength: number;
  prefixNames: boolean;
  /** Names the endpoint gives to something else (the search meta-tools). */
  reserved: readonly string[];
  /**
   * Names are passed on as the upstream gives them, whatever their characters: an unprefixed endpoint that
   * lists its catalogue (exposure all) does so uncurated, and curation must not change it (a tool left out
   * for its name, without a word, because an exclude glob named another). Elsewhere such a name is left out.
   */
  passNames?: boolean | undefined;
  /** Hybrid search (tools.embeddings); absent: searches rank by the lexical index alone. */
  semantic?: SemanticRanker | undefined;
}

/**
 * Tools as a screen shows them to some callers (hidden text stripped from their texts): what a search
 * for those callers must match and rank, not the texts they are never shown.
 */
export interface ShownTools {
  /** Names the screen: one key, one way of showing every tool (what is built from it is kept under it). */
  readonly key: string;
  /** The tool's definition as shown (curated), or undefined when it is withheld. */
  show(t: ViewTool): Definition | undefined;
}

/** Screens whose texts a view keeps an index (and vectors) of, at most: a tenant's override of the endpoint's is one more. */
const SHOWN_KEPT = 8;

/** After a failed attempt, a view's tools are embedded again no sooner than this. */
const VECTORS_RETRY_MS = 60_000;

/** One set of a view's tool texts (its own, or as a screen shows them) and what search builds of them. */
class Searchable {
  readonly definitions: readonly Definition[];
  index: ToolIndex | undefined;
  vectors: Promise<Float32Array[] | undefined> | undefined;
  ready: Float32Array[] | undefined;
  waited = false;
  failedAt = -Infinity;

  constructor(definitions: readonly Definition[]) {
    this.definitions = definitions;
  }
}

/** What of a tool is embedded: its server, the words of its name (a rename's, as the caller sees it), its title, description and parameter names. */
function embeddingText(t: ViewTool, d: Definition): string {
  const title = typeof d.title === 'string' ? ` (${d.title})` : '';
  const description = typeof d.description === 'string' ? d.description : '';
  const props = (d.inputSchema as { properties?: unknown } | undefined)?.properties;
  const params = props && typeof props === 'object' ? ` Parameters: ${Object.keys(props).join(', ')}.` : '';
  return `${t.upstream}: ${words(t.rename ?? t.tool).join(' ')}${title}. ${description}${params}`.slice(0, 4000);
}

/**
 * One version of an endpoint's tool catalogue for one curation: exposed name ↔ upstream tool, the
 * curated definitions, and the search index over them (built on first search). Immutable: a catalogue
 * change makes a new view (see ToolViews), so no request ever sees a half-updated one.
 */
export class ToolView {
  /** Sorted by canonical name: the order ids in the index and ties in ranking follow. */
  readonly tools: readonly ViewTool[];
  /** The upstreams whose catalogue this view holds. */
  readonly upstreams: ReadonlySet<string>;
  /** Tools that got no name (a rename or a meta-tool took it). */
  readonly shadowed: readonly string[];
  /** Tools curation admits but does not rename that are left out for a name that breaks the MCP name rule (their canonical names, as listed). */
  readonly misnamed: readonly string[];
  readonly #byName = new Map<string, ViewTool>();
  readonly #byCanonical = new Map<string, ViewTool>();
  readonly #input: ViewInput;
  /** The tools' own (curated) texts, and those screens show, by the screen's key. */
  readonly #own: Searchable;
  readonly #shown = new Map<string, Searchable>();

  /** Each upstream's tools as it listed them, before curation: what tool pinning's first sighting is made of. */
  get catalogues(): ReadonlyMap<string, ReadonlyMap<string, Definition>> {
    return this.#input.catalogues;
  }

  constructor(input: ViewInput) {
    this.#input = input;
    this.upstreams = new Set(input.catalogues.keys());
    const entries: Array<{ upstream: string; tool: string; raw: Definition } & NameRequest> = [];
    const misnamed: string[] = [];
    for (const [upstream, catalogue] of input.catalogues) {
      for (const [tool, raw] of catalogue) {
        const canonical = input.prefixNames ? prefixed(upstream, tool) : tool;
        if (!input.curation.admits(canonical)) continue;
        // A rename is how an operator keeps a tool whose own name breaks the rule (Curation.listable).
        if (!input.passNames && !input.curation.listable(canonical)) {
          misnamed.push(canonical);
          continue;
        }
        entries.push({ upstream, tool, raw, canonical, rename: input.curation.renameOf(canonical), keep: input.prefixNames ? upstream.length + 3 : 1 });
      }
    }
    const { names, shadowed } = assignNames(entries, input.maxNameLength, input.reserved);
    this.shadowed = shadowed;
    this.misnamed = misnamed;
    this.tools = entries
      .filter((e) => names.has(e.canonical))
      .sort((a, b) => (a.canonical < b.canonical ? -1 : 1))
      .map((e) => {
        const name = names.get(e.canonical)!;
        const rename = e.rename === name ? name : undefined;
        return { name, canonical: e.canonical, upstream: e.upstream, tool: e.tool, rename, raw: e.raw, definition: input.curation.apply(e.raw, e.canonical, name) };
      });
    for (const t of this.tools) {
      this.#byName.set(t.name, t);
      this.#byCanonical.set(t.canonical, t);
    }
    this.#own = new Searchable(this.tools.map((t) => t.definition));
  }

  /** The texts a search of these callers goes by: the tools' own, or as `shown` shows them (a withheld one: its names alone). */
  #searchable(shown: ShownTools | undefined): Searchable {
    if (shown === undefined) return this.#own;
    let s = this.#shown.get(shown.key);
    if (s === undefined) {
      if (this.#shown.size >= SHOWN_KEPT) this.#shown.delete(this.#shown.keys().next().value!);
      const definitions = this.tools.map((t) => shown.show(t) ?? {});
      // Nothing the screen changes (the common case): the view's own index and vectors serve.
      s = definitions.every((d, i) => d === this.tools[i]!.definition) ? this.#own : new Searchable(definitions);
      this.#shown.set(shown.key, s);
    }
    return s;
  }

  /** The tool clients call by this name. */
  named(name: string): ViewTool | undefined {
    return this.#byName.get(name);
  }

  byCanonical(canonical: string): ViewTool | undefined {
    return this.#byCanonical.get(canonical);
  }

  /**
   * The exposed name of a listed tool, undefined when curation hides it. A tool this view does not hold
   * (listed after the catalogue it was built from) is named by the same rules, without clash handling.
   */
  exposedName(canonical: string): string | undefined {
    const known = this.#byCanonical.get(canonical);
    if (known) return known.name;
    const { curation, maxNameLength, passNames } = this.#input;
    const rename = curation.renameOf(canonical);
    if ((!passNames && !curation.listable(canonical)) || !curation.admits(canonical)) return undefined;
    const name = rename ?? (canonical.length <= maxNameLength ? canonical : shortName(canonical, maxNameLength));
    return this.#byName.has(name) || this.#input.reserved.includes(name) || (!passNames && !isValidToolName(name)) ? undefined : name;
  }

  /** Every tool that matches the query's words, best first (the lexical index alone). */
  search(query: string): ViewTool[] {
    return this.index().search(query).map((i) => this.tools[i]!);
  }

  /**
   * The tools for a task, best first: the lexical ranking, fused with the semantic one when the endpoint
   * has an embeddings provider and it answers within its timeout (else the lexical ranking alone). The
   * tools' vectors are fetched once per view; the first search waits for them at most the provider's
   * timeout, later ones do not wait, and each is lexical while they are not there. `scope` (the
   * caller's tenant) keeps cached query vectors apart. `admits` (by position in `tools`): the tools the
   * caller may see, the only ones ranked, returned or learnt from (see ToolIndex.search); all when absent.
   * `shown`: the tools as the caller is shown them, when a screen changes their texts; both rankings go by those.
   */
  async rank(query: string, scope = '', admits?: Admits, shown?: ShownTools): Promise<ViewTool[]> {
    const s = this.#searchable(shown);
    const lexical = this.#index(s).search(query, admits);
    const semantic = this.#input.semantic;
    const vectors = semantic && (s.ready ?? (await this.#firstWait(s, semantic.config.timeoutMs)));
    // Without the tools' vectors the query is not sent at all: it could not be used.
    const q = vectors && (await semantic.queryVector(query, scope));
    const ids = q && vectors ? semantic!.fuse(lexical, q, vectors, admits) : lexical;
    return ids.map((i) => this.tools[i]!);
  }

  /** Only the first search of a version (of its texts) waits for its tools' vectors; later ones use them once they are there. */
  #firstWait(s: Searchable, ms: number): Promise<Float32Array[] | undefined> {
    const pending = this.#vectorsOf(s);
    if (s.waited) return Promise.resolve(undefined);
    s.waited = true;
    return within(pending, ms);
  }

  /** This version's tool vectors (started ahead of the first search where the endpoint can); undefined while the provider fails. */
  vectors(): Promise<Float32Array[] | undefined> {
    return this.#vectorsOf(this.#own);
  }

  #vectorsOf(s: Searchable): Promise<Float32Array[] | undefined> {
    const semantic = this.#input.semantic;
    if (!semantic) return Promise.resolve(undefined);
    if (s.vectors === undefined && Date.now() - s.failedAt >= VECTORS_RETRY_MS) {
      s.vectors = semantic.toolVectors(this.tools.map((t, i) => embeddingText(t, s.definitions[i]!))).then((v) => {
        if (v) s.ready = v;
        else {
          s.vectors = undefined;
          s.failedAt = Date.now();
        }
        return v;
      });
    }
    return s.vectors ?? Promise.resolve(undefined);
  }

  /** The search index of this version: built once, ahead of the first search where the endpoint can (see EndpointRouter.prepareTools). */
  index(): ToolIndex {
    return this.#index(this.#own);
  }

  #index(s: Searchable): ToolIndex {
    s.index ??= new ToolIndex(
      this.tools.map((t, i) => {
        const d = s.definitions[i]!;
        return {
          // A renamed tool by its new name alone: the caller is never shown the upstream's own, and its words
          // would find and rank the tool for what the operator's rename meant to leave behind.
          names: t.rename === undefined ? [t.name, t.tool] : [t.name],
          upstream: t.upstream,
          title: typeof d.title === 'string' ? d.title : undefined,
          description: typeof d.description === 'string' ? d.description : undefined,
          inputSchema: d.inputSchema,
        };
      }),
    );
    return s.index;
  }
}

/** The promise's value, or undefined once `ms` have passed (the work goes on for later callers). */
function within<T>(p: Promise<T | undefined>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, ms, undefined);
    timer.unref();
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
