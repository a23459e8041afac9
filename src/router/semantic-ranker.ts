import { createHash } from 'node:crypto';
import type { EmbeddingsConfig } from '../config/tools-schema.js';
import type { Logger } from '../observability/logger.js';
import { EmbeddingsClient, EmbeddingsError, type EmbeddingsFailure } from './embeddings-client.js';

/** What each embeddings request came to (the metric): a catalogue's tools, or one search's query. */
export interface EmbeddingsObserver {
  request(purpose: 'catalogue' | 'query', outcome: 'ok' | EmbeddingsFailure): void;
}

/** Reciprocal rank fusion's k: a rank's weight is 1 / (k + rank), so no single list's top decides alone. */
const RRF_K = 60;
/** How many of the semantic ranking's best take part in the fusion (the rest say little). */
const SEMANTIC_DEPTH = 100;
/** Tool vectors kept across catalogue versions (by text), so a change embeds only what changed. */
const MAX_TOOL_VECTORS = 50_000;
/** Query vectors kept: agents repeat their searches. */
const MAX_QUERY_VECTORS = 1_000;
/** A catalogue is embedded in the background; each of its requests may take this much longer than a query's. */
const CATALOGUE_TIMEOUT_FACTOR = 10;
/** A failing provider is named in the log at most this often. */
const WARN_EVERY_MS = 60_000;

const digest = (text: string): string => createHash('sha256').update(text).digest('base64url');

function remember<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  if (map.size >= max) map.delete(map.keys().next().value!);
  map.set(key, value);
}

/**
 * The semantic half of hybrid tool search, one per endpoint: embeds tool texts and queries through the
 * configured provider, keeps the vectors (tools by the digest of their text, so a catalogue change
 * embeds only new or changed tools; recent queries), and fuses a semantic ranking with the lexical one.
 * A provider that fails or is slow never fails a search: the caller gets undefined and ranks lexically.
 */
export class SemanticRanker {
  readonly config: EmbeddingsConfig;
  readonly #client: EmbeddingsClient;
  readonly #logger: Logger;
  readonly #observer: EmbeddingsObserver | undefined;
  readonly #tools = new Map<string, Float32Array>();
  readonly #queries = new Map<string, Float32Array>();
  #lastWarned = 0;

  constructor(config: EmbeddingsConfig, logger: Logger, observer?: EmbeddingsObserver) {
    this.config = config;
    this.#client = new EmbeddingsClient(config);
    this.#logger = logger;
    this.#observer = observer;
  }

  /** One vector per text (undefined when the provider failed: logged and counted). */
  async toolVectors(texts: readonly string[]): Promise<Float32Array[] | undefined> {
    const keys = texts.map(digest);
    const missing = [...new Set(keys.filter((k) => !this.#tools.has(k)))];
    const textOf = new Map(keys.map((k, i) => [k, texts[i]!]));
    for (let at = 0; at < missing.length; at += this.config.batchSize) {
      const batch = missing.slice(at, at + this.config.batchSize);
      const vectors = await this.#embed('catalogue', batch.map((k) => textOf.get(k)!), this.config.timeoutMs * CATALOGUE_TIMEOUT_FACTOR);
      if (!vectors) return undefined;
      batch.forEach((k, i) => remember(this.#tools, k, vectors[i]!, MAX_TOOL_VECTORS));
    }
    const out = keys.map((k) => this.#tools.get(k));
    // A catalogue larger than what is kept: the oldest of its own vectors made room for the newest.
    return out.every((v) => v !== undefined) ? (out as Float32Array[]) : undefined;
  }

  /** The query's vector, or undefined when the provider failed or took longer than timeoutMs. */
  async queryVector(query: string): Promise<Float32Array | undefined> {
    const known = this.#queries.get(query);
    if (known) return known;
    const v = (await this.#embed('query', [query], this.config.timeoutMs))?.[0];
    if (v) remember(this.#queries, query, v, MAX_QUERY_VECTORS);
    return v;
  }

  /**
   * The lexical ranking (ids, best first) fused with the semantic one (every tool by its vector's cosine
   * to the query, the best SEMANTIC_DEPTH of them) by reciprocal rank fusion, weighted by `weight`: a tool
   * either list ranks high comes first, and one the words missed entirely can still be found.
   */
  fuse(lexical: readonly number[], query: Float32Array, tools: readonly Float32Array[]): number[] {
    const w = this.config.weight;
    const score = new Map<number, number>();
    lexical.forEach((id, rank) => score.set(id, (1 - w) / (RRF_K + rank + 1)));
    if (tools.length > 0 && tools[0]!.length === query.length) {
      const cosine = tools.map((v) => dot(v, query));
      const semantic = cosine.map((_c, id) => id).sort((a, b) => cosine[b]! - cosine[a]! || a - b).slice(0, SEMANTIC_DEPTH);
      semantic.forEach((id, rank) => score.set(id, (score.get(id) ?? 0) + w / (RRF_K + rank + 1)));
    }
    return [...score.keys()].sort((a, b) => score.get(b)! - score.get(a)! || a - b);
  }

  async #embed(purpose: 'catalogue' | 'query', inputs: string[], timeoutMs: number): Promise<Float32Array[] | undefined> {
    try {
      const vectors = await this.#client.embed(inputs, timeoutMs);
      this.#observer?.request(purpose, 'ok');
      return vectors;
    } catch (err) {
      const reason = err instanceof EmbeddingsError ? err.reason : 'invalid';
      this.#observer?.request(purpose, reason);
      if (Date.now() - this.#lastWarned > WARN_EVERY_MS) {
        this.#lastWarned = Date.now();
        this.#logger.warn({ url: redactedUrl(this.config.url), purpose, reason, err: (err as Error).message }, 'tool search: the embeddings provider failed; searches rank by words alone until it answers (said at most once a minute)');
      }
      return undefined;
    }
  }
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** The provider's URL as a log line may show it (a key in the query string stays out). */
function redactedUrl(url: string): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
}
