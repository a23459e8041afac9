import MiniSearch from 'minisearch';
import { term, words } from './search-terms.js';

/** What is indexed of one tool: its texts by field (the view's position is its id). */
export interface IndexedTool {
  /** The exposed name and the upstream's own name (a renamed tool is found by either). */
  names: readonly string[];
  upstream: string;
  title?: string | undefined;
  description?: string | undefined;
  inputSchema?: unknown;
}

interface Doc {
  id: number;
  name: string;
  title: string;
  description: string;
  params: string;
  paramText: string;
  upstream: string;
}

/**
 * Field weights: a query word in a tool's name says most about it, then its title, its description,
 * its parameter names, the descriptions of its parameters, and the server it comes from.
 */
const BOOST = { name: 4, title: 3, description: 1.5, params: 1.2, paramText: 0.6, upstream: 1 };
const FIELDS = Object.keys(BOOST);

/** Parameter names and descriptions, one level of nesting deep (where the common shapes put them). */
function paramsOf(schema: unknown, depth = 0): { names: string[]; texts: string[] } {
  const out = { names: [] as string[], texts: [] as string[] };
  const props = (schema as { properties?: unknown } | undefined)?.properties;
  if (!props || typeof props !== 'object' || depth > 1) return out;
  for (const [name, p] of Object.entries(props as Record<string, unknown>)) {
    out.names.push(name);
    const d = (p as { description?: unknown } | null)?.description;
    if (typeof d === 'string') out.texts.push(d);
    const inner = paramsOf((p as { items?: unknown } | null)?.items ?? p, depth + 1);
    out.names.push(...inner.names);
    out.texts.push(...inner.texts);
  }
  return out;
}

function docOf(t: IndexedTool, id: number): Doc {
  const params = paramsOf(t.inputSchema);
  return {
    id,
    name: [...new Set(t.names)].join(' '),
    title: t.title ?? '',
    description: t.description ?? '',
    params: params.names.join(' '),
    paramText: params.texts.join(' '),
    upstream: t.upstream,
  };
}

/**
 * A lexical index over one catalogue (MiniSearch: BM25+ with per-field weights), built once per
 * catalogue version; searching it returns every match, best first, so that a caller can filter by
 * policy and still have enough left to fill its page.
 */
export class ToolIndex {
  readonly #search: MiniSearch<Doc>;

  constructor(tools: readonly IndexedTool[]) {
    this.#search = new MiniSearch<Doc>({
      fields: FIELDS,
      tokenize: words,
      processTerm: term,
      searchOptions: {
        boost: BOOST,
        combineWith: 'OR',
        // A query word of four letters or more also matches longer words it begins ("repo" → repository);
        // one of six or more forgives a typo. Both count for less than an exact word.
        prefix: (t) => t.length >= 4,
        fuzzy: (t) => (t.length >= 6 ? 1 : false),
        weights: { prefix: 0.4, fuzzy: 0.2 },
      },
    });
    this.#search.addAll(tools.map(docOf));
  }

  /** Ids (positions in the catalogue) of every tool that matches, best first; equal scores by position. */
  search(query: string): number[] {
    const hits = this.#search.search(query);
    hits.sort((a, b) => b.score - a.score || (a.id as number) - (b.id as number));
    return hits.map((h) => h.id as number);
  }
}
