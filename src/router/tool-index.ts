import MiniSearch from 'minisearch';
import { actionOf, actionWeight, type NameAction } from './search-actions.js';
import { synonymsOf } from './search-synonyms.js';
import { isQuestion, queryWords } from './search-query.js';
import { searchWords, term, words } from './search-terms.js';

/** What is indexed of one tool: its texts by field (the view's position is its id). */
export interface IndexedTool {
  /** The exposed name, and the upstream's own unless curation renamed the tool (the caller never sees that one). */
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
 * description, its parameter names and the server it comes from, and parameter descriptions. MiniSearch
 * reads a weight of 0 as 1 (`boost[field] || 1`), so parameter descriptions always weighed 1 where
 * an earlier 0 here said "none"; measured with a true near-zero or 0.5, neither wins on the tuning half.
 */
const BOOST = { name: 3, title: 3, lead: 2, description: 2, params: 1.2, paramText: 1, upstream: 1, pairs: 1 };
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
/** A tool matched by feedback words alone covers none of the query's: it keeps this much of its sum. */
const FEEDBACK_ONLY = 0.5;

/**
 * A task that names a server ("in Notion", "on GitHub", "our postgres") wants one of its tools: their
 * scores are multiplied by this. A multiplier and not a higher weight of the server's field, which
 * measured flat: that field is one word among a tool's many, and a server's name appears in some of its
 * tools' descriptions and not in others'. Measured on the corpus: 1.5; 2 gains nothing more, 3 loses.
 * A server named for a common word ("everything") is raised by tasks that use the word as a word.
 */
const NAMED_UPSTREAM = 1.5;
/**
 * How many tools of other servers may use a word of a server's name in their names or titles and the
 * word still name that server: one ("github" for firecrawl_research_search_github); a word that more
 * use ("search" of brave-search, "map" of google-maps) says what tools do, not which server.
 */
const UPSTREAM_WORD_ELSEWHERE = 1;

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
    const ts = searchWords(w.word).map(term).filter((t): t is string => t !== null);
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

/** One term's BM25 score in every tool it occurs in (over all fields, with their weights). */
interface Postings {
  ids: Int32Array;
  scores: Float64Array;
}
const NO_POSTINGS: Postings = { ids: new Int32Array(0), scores: new Float64Array(0) };

const splitTerms = (s: string): string[] => s.split(' ').filter((x) => x.length > 0);

/** Which tools (by position) a search may return and learn from: 1 for each the caller may see. */
export type Admits = Uint8Array;
/** A term already processed, searched as it is. */
const oneTerm = (s: string): string[] => [s];
const asIs = (t: string): string => t;

/**
 * What one query's terms add up to in every tool: the BM25 sum (each term's score times its weight)
 * and how much of the query's own words the tool covers (each own word once, by its weight, whether a
 * tool has it or a synonym of it). Typed arrays over the catalogue's positions: a search allocates
 * three arrays and no object per tool.
 */
class Tally {
  readonly sum: Float64Array;
  readonly covered: Float64Array;
  readonly #seen: Uint8Array;
  readonly #ownIndex: Map<string, number>;
  readonly #ownWeight: number[];
  /** Per tool, what its score is multiplied by: NAMED_UPSTREAM and actionWeight (1 when absent). */
  readonly prior: Float64Array;

  constructor(size: number, own: ReadonlyMap<string, number>) {
    this.sum = new Float64Array(size);
    this.covered = new Float64Array(size);
    this.#ownIndex = new Map([...own.keys()].map((t, i) => [t, i]));
    this.#ownWeight = [...own.values()];
    this.#seen = new Uint8Array(size * Math.max(1, own.size));
    this.prior = new Float64Array(size).fill(1);
  }

  add(p: Postings, weight: number, standsFor: ReadonlySet<string> | undefined): void {
    const n = this.#ownWeight.length;
    const owns = standsFor ? [...standsFor].map((t) => this.#ownIndex.get(t)!) : [];
    for (let i = 0; i < p.ids.length; i++) {
      const id = p.ids[i]!;
      this.sum[id]! += weight * p.scores[i]!;
      for (const o of owns) {
        if (this.#seen[id * n + o]) continue;
        this.#seen[id * n + o] = 1;
        this.covered[id]! += this.#ownWeight[o]!;
      }
    }
  }

  score(id: number): number {
    return this.sum[id]! * Math.max(this.covered[id]!, FEEDBACK_ONLY) * this.prior[id]!;
  }

  /** The admitted tools with a score, best first; equal scores by position. */
  ranked(admits: Admits | undefined): number[] {
    const ids: number[] = [];
    for (let id = 0; id < this.sum.length; id++) if (this.sum[id]! > 0 && (admits === undefined || admits[id] === 1)) ids.push(id);
    const scores = new Float64Array(this.sum.length);
    for (const id of ids) scores[id] = this.score(id);
    return ids.sort((a, b) => scores[b]! - scores[a]! || a - b);
  }
}

/**
 * A lexical index over one catalogue (MiniSearch: BM25 with per-field weights), built once per
 * catalogue version; searching it returns every match, best first, so that a caller can filter by
 * policy and still have enough left to fill its page.
 *
 * A query is the weighted sum of its terms' BM25 scores, as MiniSearch's OR search sums them; the
 * catalogue does not change under an index, so each term's scores are asked of MiniSearch once, on the
 * term's first search, and kept (#postings). Only terms that occur in the catalogue are kept, so the
 * memory is bounded by the catalogue's vocabulary, not by what callers search for.
 */
export class ToolIndex {
  readonly #search: MiniSearch<Doc>;
  readonly #size: number;
  /** Every term in the catalogue: a query term outside it matches nothing and is never looked up. */
  readonly #vocabulary = new Set<string>();
  readonly #postings = new Map<string, Postings>();
  /** Each tool's name, title and first-sentence terms: where feedback words are taken from. */
  readonly #leadTerms: string[][];
  /** In how many tools' #leadTerms each term occurs. */
  readonly #df = new Map<string, number>();
  /** Each tool's upstream. */
  readonly #upstreamOf: readonly string[];
  /** The terms that name an upstream (see UPSTREAM_WORD_ELSEWHERE), to the upstream each names. */
  readonly #upstreamTerms = new Map<string, string>();
  /** The changes each tool's name says (see actionOf). */
  readonly #actions: readonly NameAction[];

  constructor(tools: readonly IndexedTool[]) {
    this.#search = new MiniSearch<Doc>({
      fields: FIELDS,
      tokenize: searchWords,
      // Every term indexed is also noted as the catalogue's vocabulary (see #postingsOf); searches pass
      // their own processTerm, so this sees indexing only.
      processTerm: (w) => {
        const t = term(w);
        if (t !== null) this.#vocabulary.add(t);
        return t;
      },
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
    this.#size = docs.length;
    this.#search.addAll(docs);
    this.#leadTerms = docs.map((d) => [d.name, d.title, d.lead].flatMap(searchWords).map(term).filter((t): t is string => t !== null));
    for (const ts of this.#leadTerms) for (const t of new Set(ts)) this.#df.set(t, (this.#df.get(t) ?? 0) + 1);
    this.#upstreamOf = tools.map((t) => t.upstream);
    this.#actions = docs.map((d) => actionOf(words(d.name).map(term).filter((t): t is string => t !== null)));
    // Which upstreams use each name or title term, once per tool.
    const usedBy = new Map<string, string[]>();
    docs.forEach((d, id) => {
      for (const t of new Set([d.name, d.title].flatMap(searchWords).map(term))) {
        if (t === null) continue;
        let us = usedBy.get(t);
        if (!us) usedBy.set(t, (us = []));
        us.push(this.#upstreamOf[id]!);
      }
    });
    for (const u of new Set(this.#upstreamOf)) {
      for (const t of searchWords(u).map(term)) {
        // A number in a server's name ("7" of context7) names nothing by itself.
        if (t === null || /^[0-9]+$/.test(t)) continue;
        if ((usedBy.get(t) ?? []).filter((o) => o !== u).length <= UPSTREAM_WORD_ELSEWHERE) this.#upstreamTerms.set(t, u);
      }
    }
  }

  /**
   * Ids (positions in the catalogue) of every tool that matches, best first; equal scores by position.
   * The query with its synonyms, then the feedback words of its best match added to the same sums (BM25
   * sums over terms, so this ranks as one search with all of them would). Each tool's score is then
   * multiplied by what the task says of it as a whole: the server it names (NAMED_UPSTREAM), and a
   * change it does not ask for or a question put to a tool that changes (actionWeight).
   *
   * `admits`: the tools the caller may see (policy, pins, screening). Only those are returned, and only
   * one of them gives the feedback words: a tool the caller may not see must not steer what it is shown
   * (a query only a hidden tool matches would otherwise return that tool's neighbours, and so tell the
   * caller the hidden tool exists and which words it has). Term statistics (idf) stay the catalogue's.
   */
  search(query: string, admits?: Admits): number[] {
    const expanded = expand(query);
    const tally = new Tally(this.#size, expanded.own);
    const question = isQuestion(query);
    const named = new Set([...expanded.own.keys()].flatMap((t) => this.#upstreamTerms.get(t) ?? []));
    for (let id = 0; id < this.#size; id++) {
      if (named.has(this.#upstreamOf[id]!)) tally.prior[id]! *= NAMED_UPSTREAM;
      tally.prior[id]! *= actionWeight(this.#actions[id]!, expanded.boost, question);
    }
    for (const [t, w] of expanded.boost) tally.add(this.#postingsOf(t), w, expanded.origin.get(t));
    let best = -1;
    for (let id = 0; id < this.#size; id++) {
      if (tally.sum[id]! > 0 && (admits === undefined || admits[id] === 1) && (best < 0 || tally.score(id) > tally.score(best))) best = id;
    }
    if (best < 0) return [];
    for (const [t, w] of this.#feedback(expanded, best)) tally.add(this.#postingsOf(t), w, undefined);
    return tally.ranked(admits);
  }

  /** One term's scores in every tool, from MiniSearch on the term's first search (see the class comment). */
  #postingsOf(t: string): Postings {
    if (!this.#vocabulary.has(t)) return NO_POSTINGS;
    let p = this.#postings.get(t);
    if (!p) {
      const hits = this.#search.search(t, { tokenize: oneTerm, processTerm: asIs });
      p = { ids: Int32Array.from(hits, (h) => h.id as number), scores: Float64Array.from(hits, (h) => h.score) };
      this.#postings.set(t, p);
    }
    return p;
  }

  /** The most distinctive lead terms of the given tool that the query does not already have, by weight. */
  #feedback(expanded: Expanded, id: number): Map<string, number> {
    const n = this.#leadTerms.length;
    const ts = this.#leadTerms[id]!;
    const weight = new Map<string, number>();
    for (const t of new Set(ts)) if (!expanded.boost.has(t)) weight.set(t, Math.log(1 + n / (this.#df.get(t) ?? 1)) / ts.length);
    const best = [...weight].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, FEEDBACK_TERMS);
    return new Map(best.map(([t, w]) => [t, (FEEDBACK_WEIGHT * w) / best[0]![1]]));
  }
}
