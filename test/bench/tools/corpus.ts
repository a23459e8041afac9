/**
 * Typed access to the tool-search fixture: the tool definitions collected from real MCP servers
 * (test/fixtures/tool-corpus/corpus.json, written by collect-corpus.mjs) and the task queries with the
 * tools that serve them (queries.json, written by hand).
 *
 * Tools are flattened under the names an aggregating endpoint gives them, `<server>__<tool>`, so the
 * bench measures ranking over the same names a model would see through the gateway.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** One tool definition exactly as its server listed it (unknown fields kept: the corpus is raw data). */
export interface CorpusToolDefinition {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  [field: string]: unknown;
}

export interface CorpusServer {
  /** Short name used as the aggregation prefix, e.g. `github`. */
  name: string;
  /** npm package and the exact version installed from the registry. */
  package: string;
  version: string;
  domain: string;
  serverInfo: Record<string, unknown>;
  /** Arguments (`{work}` is the scratch folder) and the names of the dummy environment variables. */
  start: { args: string[]; env: string[] };
  tools: CorpusToolDefinition[];
}

export interface Corpus {
  collectedAt: string;
  collector: string;
  node: string;
  host: string;
  servers: CorpusServer[];
  leftOut: { package: string; version: string; reason: string }[];
}

export interface ExpectedTool {
  server: string;
  tool: string;
}

export interface TaskQuery {
  id: string;
  query: string;
  /** Every tool that genuinely serves the task; a hit on any of them counts. */
  expected: ExpectedTool[];
  /** The part of the catalogue the query was written for (for per-group breakdowns). */
  group: string;
}

/** A tool under its aggregated name, with the definition an `all`-mode tools/list would carry. */
export interface AggregatedTool {
  name: string;
  server: string;
  tool: string;
  definition: CorpusToolDefinition;
}

const FIXTURE_DIR = fileURLToPath(new URL('../../fixtures/tool-corpus/', import.meta.url));
export const CORPUS_PATH = `${FIXTURE_DIR}corpus.json`;
export const QUERIES_PATH = `${FIXTURE_DIR}queries.json`;

export const aggregatedName = (server: string, tool: string): string => `${server}__${tool}`;

let corpusCache: Corpus | undefined;
let queriesCache: TaskQuery[] | undefined;

export function loadCorpus(): Corpus {
  corpusCache ??= JSON.parse(readFileSync(CORPUS_PATH, 'utf8')) as Corpus;
  return corpusCache;
}

export function loadQueries(): TaskQuery[] {
  queriesCache ??= (JSON.parse(readFileSync(QUERIES_PATH, 'utf8')) as { queries: TaskQuery[] }).queries;
  return queriesCache;
}

/** Every tool of every server, in corpus order, under its `<server>__<tool>` name. */
export function aggregatedTools(corpus: Corpus = loadCorpus()): AggregatedTool[] {
  return corpus.servers.flatMap((server) =>
    server.tools.map((def) => {
      const name = aggregatedName(server.name, def.name);
      return { name, server: server.name, tool: def.name, definition: { ...def, name } };
    }),
  );
}

/** The result an endpoint aggregating the whole corpus returns for tools/list in `all` mode. */
export function toolsListResult(corpus: Corpus = loadCorpus()): { tools: CorpusToolDefinition[] } {
  return { tools: aggregatedTools(corpus).map((t) => t.definition) };
}

/** The aggregated names a query accepts as a correct answer. */
export function expectedNames(query: TaskQuery): string[] {
  return query.expected.map((e) => aggregatedName(e.server, e.tool));
}
