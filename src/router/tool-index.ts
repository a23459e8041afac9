import MiniSearch from 'minisearch';
import { synonymsOf } from './search-synonyms.js';
import { queryWords } from './search-query.js';
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
  /** Name word pairs (see pairsOf). */
  pairs: string;
}

/**
 * Field weights, measured on the tool corpus (npm run bench:tools): a query word in a tool's name or
 * title says most about it, then the first sentence of its description (what the tool does), the whole
 * description, its parameter names and the server it comes from. Parameter descriptions are indexed
 * without weight: they only count towards how many of the query's words a tool covers (see search).
 */
const BOOST = { name: 3, title: 3, lead: 2, description: 2, params: 1.2, paramText: 0, upstream: 1, pairs: 1 };
const FIELDS = Object.keys(BOOST);

/**
 * BM25 with full length normalisation (b = 1) and no BM25+ floor (d = 0): long descriptions that
 * mention many words in passing (usage notes, examples) must not outrank short ones that say the thing.
 */
const BM25 = { k: 0.8, b: 1, d: 0 };

/** How much a synonym of a query word counts against the word itself. */
const SYNONYM_WEIGHT = 0.5;

/**
 * Pseudo-relevance feedback: the most distinctive words of the best match's name, title and first
 * sentence join the query at this weight (the most distinctive at FEEDBACK_WEIGHT, the others by their
 * idf relative to it), and the query is ranked again. A task's words often miss a tool that its top hit
 * describes in the catalogue's own words (a sibling tool of the same server, the same action elsewhere).
 * Measured on the corpus: one feedback tool and three words; more of either drifts.
 */
const FEEDBACK_TERMS = 3;
const FEEDBACK_WEIGHT = 0.3;
const FEEDBACK_ONLY = 0.5;

/** Parameter names and descriptions, one level of nesting deep (where the common shapes put them). */
function paramsOf(schema: unknown, depth = 0): { names: string[]; texts: string[] } {
  const out = { names: [] as string[], texts: [] as string[] };
  const props = (schema as { properties?: unknown } | undefined)?.properties;
  if (!props || typeof props !== 'object' || depth > 1) return out;
  for (const [name, p] of Object.entries(props as Record<string, unknown>)) {
    out.names.push(name);
    const d = (p as { description?: unknown } | null)?.description;
    if (typeof d === 'string') out.texts.push(d);
    // An enum's values are the words a task uses for what the tool can do ("dark" for a colour scheme,
    // "restart" for a rollout action): they count as parameter names.
    const values = (p as { enum?: unknown } | null)?.enum;
    if (Array.isArray(values)) out.names.push(...values.filter((v): v is string => typeof v === 'string'));
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
    pairs: pairsOf(splitTerms(nameWords(t)).map(term).filter((x): x is string => x !== null)).join(' '),
  };
}

/** Query terms by weight, and for each the query words it stands for (none for a feedback term). */
interface Expanded {
  boost: Map<string, number>;
  origin: Map<string, Set<string>>;
  /** The query's own terms and their weights: what covering a term is worth. */
  own: ReadonlyMap<string, number>;
}

/**
 * Adjacent terms joined into one ("pull request" → pullrequest): a tool whose name says the query's two
 * words in its order ("list pull requests" for "pull requests") ranks above one that has them apart.
 * Indexed for names only (the words that matter most); a pair is searched as one query word, and covers
 * the two it joins (which a tool matching the pair matches by themselves as well).
 */
function pairsOf(ts: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < ts.length; i++) out.push(`${ts[i]}${ts[i + 1]}`);
  return out;
}

/** A query's own terms by weight (see queryWords), the synonyms of its task words, and its word pairs. */
function expand(query: string): Expanded {
  const boost = new Map<string, number>();
  const origin = new Map<string, Set<string>>();
  const task: string[][] = [[]];
  for (const w of queryWords(query)) {
    const ts = words(w.word).map(term).filter((t): t is string => t !== null);
    for (const t of ts) {
      if ((boost.get(t) ?? 0) < w.weight) boost.set(t, w.weight);
      origin.set(t, new Set([t]));
    }
    if (w.task) task.at(-1)!.push(...ts);
    else if (task.at(-1)!.length > 0) task.push([]);
  }
  const own = new Map(boost);
  for (const t of new Set(task.flat())) {
    for (const s of synonymsOf(t)) {
      if (own.has(s)) continue;
      boost.set(s, Math.max(boost.get(s) ?? 0, SYNONYM_WEIGHT * own.get(t)!));
      let o = origin.get(s);
      if (!o) origin.set(s, (o = new Set()));
      o.add(t);
    }
  }
  for (const run of task) {
    for (const [i, pair] of pairsOf(run).entries()) {
      const p = term(pair) ?? pair;
      const both = new Set([run[i]!, run[i + 1]!]);
      boost.set(p, 1);
      origin.set(p, both);
      // A phrase's synonyms ("pull request" → pr, merge request), standing for both its words.
      for (const s of synonymsOf(p)) {
        if (own.has(s) || boost.get(s) === 1) continue;
        boost.set(s, SYNONYM_WEIGHT);
        origin.set(s, new Set([...(origin.get(s) ?? []), ...both]));
      }
    }
  }
  return { boost, origin, own };
}

/** A tool's BM25 sum over the terms searched, and how much of the query's own words it covers (by their weights). */
interface Scored {
  id: number;
  sum: number;
  covered: number;
}
/** A tool matched by feedback words alone covers none of the query's: it keeps FEEDBACK_ONLY of its sum. */
const scoreOf = (h: Scored): number => h.sum * Math.max(h.covered, FEEDBACK_ONLY);
const byScore = (a: Scored, b: Scored): number => scoreOf(b) - scoreOf(a) || a.id - b.id;

const splitTerms = (s: string): string[] => s.split(' ').filter((x) => x.length > 0);
const asIs = (t: string): string => t;

/**
 * A lexical index over one catalogue (MiniSearch: BM25 with per-field weights), built once per
 * catalogue version; searching it returns every match, best first, so that a caller can filter by
 * policy and still have enough left to fill its page.
 */
export class ToolIndex {
  readonly #search: MiniSearch<Doc>;
  /** Each tool's name, title and first-sentence terms: where feedback words are taken from. */
  readonly #leadTerms: string[][];
  /** In how many tools' #leadTerms each term occurs. */
  readonly #df = new Map<string, number>();

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
    const docs = tools.map(docOf);
    this.#search.addAll(docs);
    this.#leadTerms = docs.map((d) => [d.name, d.title, d.lead].flatMap(words).map(term).filter((t): t is string => t !== null));
    for (const ts of this.#leadTerms) for (const t of new Set(ts)) this.#df.set(t, (this.#df.get(t) ?? 0) + 1);
  }

  /**
   * Ids (positions in the catalogue) of every tool that matches, best first; equal scores by position.
   * Two passes: the query with its synonyms, then the feedback words of the first pass's best match,
   * whose scores add to the first pass's (BM25 sums over terms, so this ranks as one search with all of
   * them would, at the cost of a search for the few feedback words only).
   */
  search(query: string): number[] {
    const expanded = expand(query);
    const first = this.#sums(expanded);
    if (first.length === 0) return [];
    const best = first.reduce((a, b) => (byScore(a, b) <= 0 ? a : b));
    const byId = new Map(first.map((h) => [h.id, h]));
    for (const h of this.#sums(this.#feedback(expanded, [best.id]))) {
      const known = byId.get(h.id);
      if (known) known.sum += h.sum;
      else byId.set(h.id, h);
    }
    return [...byId.values()].sort(byScore).map((h) => h.id);
  }

  /** The most distinctive lead terms of the given tools that the query does not already have. */
  #feedback(expanded: Expanded, ids: readonly number[]): Expanded {
    const n = this.#leadTerms.length;
    const weight = new Map<string, number>();
    for (const id of ids) {
      const ts = this.#leadTerms[id]!;
      for (const t of new Set(ts)) {
        if (expanded.boost.has(t)) continue;
        weight.set(t, (weight.get(t) ?? 0) + Math.log(1 + n / (this.#df.get(t) ?? 1)) / ts.length);
      }
    }
    const best = [...weight].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, FEEDBACK_TERMS);
    return { boost: new Map(best.map(([t, w]) => [t, (FEEDBACK_WEIGHT * w) / best[0]![1]])), origin: new Map(), own: new Map() };
  }

  /**
   * Each matching tool's BM25 sum over the terms, and how many query words it covers. MiniSearch
   * multiplies a score by the number of terms a document matched; a synonym or a feedback word is not
   * another word of the query, so that factor is undone here and recounted as the words covered.
   */
  #sums({ boost, origin, own }: Expanded): Scored[] {
    if (boost.size === 0) return [];
    const hits = this.#search.search([...boost.keys()].join(' '), { tokenize: splitTerms, processTerm: asIs, boostTerm: (t) => boost.get(t) ?? 1 });
    return hits.map((h) => ({
      id: h.id as number,
      sum: h.score / Math.max(1, h.queryTerms.length),
      covered: [...new Set(h.queryTerms.flatMap((t) => [...(origin.get(t) ?? [])]))].reduce((n, t) => n + (own.get(t) ?? 1), 0),
    }));
  }
}
