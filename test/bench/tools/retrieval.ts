/**
 * The tool-search measurements on the committed corpus, through the gateway's own code: the corpus is
 * handed to ToolViews as an aggregating search-mode endpoint's catalogues, so names, curation, the
 * index and its ranking are exactly what a session would get. Shared by `npm run bench:tools` and the
 * unit test that holds the acceptance floors.
 */
import { toolsSchema } from '../../../src/config/tools-schema.js';
import { createLogger } from '../../../src/observability/logger.js';
import type { ToolView } from '../../../src/router/tool-view.js';
import { ToolViews } from '../../../src/router/tool-views.js';
import { expectedNames, loadCorpus, loadQueries, type Corpus, type TaskQuery } from './corpus.js';

type Catalogue = ReadonlyMap<string, Record<string, unknown>>;

/** Each corpus server as one upstream, its tools by their own names (what an upstream's tools/list gives). */
export function corpusCatalogues(corpus: Corpus = loadCorpus()): Map<string, Catalogue> {
  return new Map(corpus.servers.map((s) => [s.name, new Map(s.tools.map((t) => [t.name, t as Record<string, unknown>]))]));
}

/**
 * The views of a search-mode endpoint with default tools settings (prefixed names, 64-character limit),
 * and with `embeddings` (tools.embeddings) for hybrid search when given.
 */
export function searchEndpointViews(embeddings?: Record<string, unknown>): ToolViews {
  return new ToolViews(toolsSchema.parse({ exposure: 'search', embeddings }), true, createLogger(embeddings ? 'warn' : 'silent'));
}

/** The view (and its index) the gateway builds for the whole corpus. */
export function corpusView(corpus: Corpus = loadCorpus(), embeddings?: Record<string, unknown>): ToolView {
  const views = searchEndpointViews(embeddings);
  return views.view(views.curationFor(''), corpusCatalogues(corpus));
}

export interface Quality {
  queries: number;
  recallAt1: number;
  recallAt5: number;
  mrr: number;
}

export interface QueryOutcome {
  query: TaskQuery;
  /** 1-based rank of the first expected tool, undefined when none is returned at all. */
  rank: number | undefined;
  top: string[];
}

/** Where the first tool that serves the query ranks, by canonical `<server>__<tool>` name. */
export function outcomeOf(view: ToolView, q: TaskQuery): QueryOutcome {
  return rankedOutcome(q, view.search(q.query).map((t) => t.canonical));
}

function rankedOutcome(q: TaskQuery, ranked: readonly string[]): QueryOutcome {
  const want = new Set(expectedNames(q));
  const i = ranked.findIndex((n) => want.has(n));
  return { query: q, rank: i < 0 ? undefined : i + 1, top: ranked.slice(0, 5) };
}

export function qualityOf(outcomes: readonly QueryOutcome[]): Quality {
  const n = outcomes.length;
  const share = (hit: (o: QueryOutcome) => boolean) => (n === 0 ? 0 : outcomes.filter(hit).length / n);
  return {
    queries: n,
    recallAt1: share((o) => o.rank === 1),
    recallAt5: share((o) => o.rank !== undefined && o.rank <= 5),
    mrr: n === 0 ? 0 : outcomes.reduce((s, o) => s + (o.rank === undefined ? 0 : 1 / o.rank), 0) / n,
  };
}

/**
 * The split that keeps tuning honest: ranking changes were judged on the even-numbered queries
 * (q002, q004, …) and the odd-numbered ones are reported as held out.
 */
export const isTuning = (q: TaskQuery): boolean => Number(q.id.replace(/\D/g, '')) % 2 === 0;

export interface Retrieval {
  overall: Quality;
  tuning: Quality;
  heldOut: Quality;
  groups: Record<string, Quality>;
  outcomes: QueryOutcome[];
}

export function measureRetrieval(view: ToolView = corpusView(), queries: readonly TaskQuery[] = loadQueries()): Retrieval {
  return retrievalOf(queries, queries.map((q) => outcomeOf(view, q)));
}

/** The same measurements through the search a session gets (view.rank): hybrid when the view has embeddings. */
export async function measureRanked(view: ToolView, queries: readonly TaskQuery[] = loadQueries()): Promise<Retrieval> {
  const outcomes: QueryOutcome[] = [];
  for (const q of queries) outcomes.push(rankedOutcome(q, (await view.rank(q.query)).map((t) => t.canonical)));
  return retrievalOf(queries, outcomes);
}

function retrievalOf(queries: readonly TaskQuery[], outcomes: QueryOutcome[]): Retrieval {
  const groups: Record<string, Quality> = {};
  for (const g of [...new Set(queries.map((q) => q.group))].sort()) groups[g] = qualityOf(outcomes.filter((o) => o.query.group === g));
  return {
    overall: qualityOf(outcomes),
    tuning: qualityOf(outcomes.filter((o) => isTuning(o.query))),
    heldOut: qualityOf(outcomes.filter((o) => !isTuning(o.query))),
    groups,
    outcomes,
  };
}
