import MiniSearch from 'minisearch';
import { synonymsOf } from './search-synonyms.js';
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
  lead: string;
  description: string;
  params: string;
  paramText: string;
  upstream: string;
}

/**
 * Field weights, measured on the tool corpus (npm run bench:tools): a query word in a tool's name or
 * title says most about it, then the first sentence of its description (what the tool does), the whole
 * description, its parameter names and the server it comes from. Parameter descriptions are indexed
 * without weight: they only count towards how many of the query's words a tool covers (see search).
 */
const BOOST = { name: 3, title: 3, lead: 2, description: 2, params: 1.2, paramText: 0, upstream: 1 };
const FIELDS = Object.keys(BOOST);

/**
 * BM25 with full length normalisation (b = 1) and no BM25+ floor (d = 0): long descriptions that
 * mention many words in passing (usage notes, examples) must not outrank short ones that say the thing.
 */
const BM25 = { k: 0.8, b: 1, d: 0 };

/** How much a synonym of a query word counts against the word itself. */
const SYNONYM_WEIGHT = 0.5;

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

/** The first sentence of a description: what the tool does (what follows is mostly how to use it). */
function leadOf(description: string): string {
  const text = description.trim().replace(/\s+/g, ' ');
  const m = /^(.*?[.!?])(\s|$)/.exec(text);
  return (m ? m[1]! : text).split(' ').slice(0, 30).join(' ');
}

/**
 * The words of a tool's names, each once and without the upstream's (already its own field): an
 * aggregated name repeats the tool's words and carries the server's, which would count them twice.
 */
function nameWords(t: IndexedTool): string {
  const upstream = new Set(words(t.upstream));
  return [...new Set(t.names.flatMap(words))].filter((w) => !upstream.has(w)).join(' ');
}

function docOf(t: IndexedTool, id: number): Doc {
  const params = paramsOf(t.inputSchema);
  return {
    id,
    name: nameWords(t),
    title: t.title ?? '',
    lead: leadOf(t.description ?? ''),
    description: t.description ?? '',
    params: params.names.join(' '),
    paramText: params.texts.join(' '),
    upstream: t.upstream,
  };
}

/** A query's own terms, and the synonyms they bring (each with the query terms it stands for). */
function expand(query: string): { boost: Map<string, number>; origin: Map<string, Set<string>> } {
  const own = [...new Set(words(query).map(term).filter((t): t is string => t !== null))];
  const boost = new Map<string, number>(own.map((t) => [t, 1]));
  const origin = new Map<string, Set<string>>(own.map((t) => [t, new Set([t])]));
  for (const t of own) {
    for (const s of synonymsOf(t)) {
      if (boost.get(s) === 1) continue;
      boost.set(s, SYNONYM_WEIGHT);
      let o = origin.get(s);
      if (!o) origin.set(s, (o = new Set()));
      o.add(t);
    }
  }
  return { boost, origin };
}

const splitTerms = (s: string): string[] => s.split(' ').filter((x) => x.length > 0);
const asIs = (t: string): string => t;

/**
 * A lexical index over one catalogue (MiniSearch: BM25 with per-field weights), built once per
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
        bm25: BM25,
        // No prefix or fuzzy matching: measured, both cost more precision than the stray word they save;
        // the stemmer and the synonyms carry the variants of a word.
        prefix: false,
        fuzzy: false,
      },
    });
    this.#search.addAll(tools.map(docOf));
  }

  /**
   * Ids (positions in the catalogue) of every tool that matches, best first; equal scores by position.
   * MiniSearch multiplies a score by the number of query terms a document matched; a synonym is not
   * another word of the query, so that factor is recounted as the query words covered, by themselves
   * or through a synonym.
   */
  search(query: string): number[] {
    const { boost, origin } = expand(query);
    const hits = this.#search.search([...boost.keys()].join(' '), { tokenize: splitTerms, processTerm: asIs, boostTerm: (t) => boost.get(t) ?? 1 });
    const scored = hits.map((h) => {
      const covered = new Set(h.queryTerms.flatMap((t) => [...(origin.get(t) ?? [])]));
      return { id: h.id as number, score: (h.score / Math.max(1, h.queryTerms.length)) * covered.size };
    });
    scored.sort((a, b) => b.score - a.score || a.id - b.id);
    return scored.map((h) => h.id);
  }
}
