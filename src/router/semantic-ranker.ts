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
/** Tool vectors kept across catalogue versions (by text), bounded by their numbers: 64 MB of floats. */
const MAX_TOOL_FLOATS = 16 * 1024 * 1024;
/** Query vectors kept (agents repeat their searches), bounded the same way: 8 MB. */
const MAX_QUERY_FLOATS = 2 * 1024 * 1024;
/** A catalogue is embedded in the background; each of its requests may take this much longer than a query's. */
const CATALOGUE_TIMEOUT_FACTOR = 10;
/** After a query the provider failed, searches do not ask it again for this long (they rank by words). */
const QUERY_BACKOFF_MS = 10_000;
/** A failing provider is named in the log at most this often. */
const WARN_EVERY_MS = 60_000;

const digest = (text: string): string => createHash('sha256').update(text).digest('base64url');

/** Vectors by key, oldest dropped first once their floats pass the bound. */
class VectorCache {
  readonly #map = new Map<string, Float32Array>();
  readonly #maxFloats: number;
  #floats = 0;

  constructor(maxFloats: number) {
    this.#maxFloats = maxFloats;
  }

  get(key: string): Float32Array | undefined {
    return this.#map.get(key);
  }

  set(key: string, v: Float32Array): void {
    this.#floats += v.length - (this.#map.get(key)?.length ?? 0);
    this.#map.set(key, v);
    while (this.#floats > this.#maxFloats && this.#map.size > 1) {
      const [oldest, old] = this.#map.entries().next().value!;
      this.#map.delete(oldest);
      this.#floats -= old.length;
    }
  }
}

/** The vectors a ranker keeps: handed on by a reload that keeps the provider's url, model and dimensions. */
export interface KeptVectors {
  tools: VectorCache;
  queries: VectorCache;
}

const sameModel = (a: EmbeddingsConfig, b: EmbeddingsConfig): boolean => a.url === b.url && a.model === b.model && a.dimensions === b.dimensions;

/**
 * The semantic half of hybrid tool search, one per endpoint: embeds tool texts and queries through the
 * configured provider, keeps the vectors (tools by the digest of their text, so a catalogue change embeds
 * only new or changed tools; recent queries, per tenant), and fuses a semantic ranking with the lexical
 * one. A provider that fails or is slow never fails a search: the caller gets undefined and ranks
 * lexically, and after a failed query searches stop asking it for QUERY_BACKOFF_MS.
 */
export class SemanticRanker {
  readonly config: EmbeddingsConfig;
  readonly #client: EmbeddingsClient;
  readonly #logger: Logger;
  readonly #observer: EmbeddingsObserver | undefined;
  readonly #kept: KeptVectors;
  #queriesFailedAt = -Infinity;
  #lastWarned = -Infinity;

  /** `previous`: the ranker a reload replaces; its vectors are kept when they come from the same model. */
  constructor(config: EmbeddingsConfig, logger: Logger, observer?: EmbeddingsObserver, previous?: SemanticRanker) {
    this.config = config;
    this.#client = new EmbeddingsClient(config);
    this.#logger = logger;
    this.#observer = observer;
    this.#kept = previous && sameModel(previous.config, config) ? previous.#kept : { tools: new VectorCache(MAX_TOOL_FLOATS), queries: new VectorCache(MAX_QUERY_FLOATS) };
  }

  /** One vector per text; undefined when the provider failed (logged and counted). Never rejects. */
  async toolVectors(texts: readonly string[]): Promise<Float32Array[] | undefined> {
    try {
      return await this.#toolVectors(texts);
    } catch (err) {
      this.#logger.error({ err }, 'tool search: embedding the catalogue failed in the gateway itself; searches rank by words alone');
      return undefined;
    }
  }

  async #toolVectors(texts: readonly string[]): Promise<Float32Array[] | undefined> {
    const keys = texts.map(digest);
    const tools = this.#kept.tools;
    const missing = [...new Set(keys.filter((k) => !tools.get(k)))];
    const textOf = new Map(keys.map((k, i) => [k, texts[i]!]));
    for (let at = 0; at < missing.length; at += this.config.batchSize) {
      const batch = missing.slice(at, at + this.config.batchSize);
      const vectors = await this.#embed('catalogue', batch.map((k) => textOf.get(k)!), this.config.timeoutMs * CATALOGUE_TIMEOUT_FACTOR);
      if (!vectors) return undefined;
      batch.forEach((k, i) => tools.set(k, vectors[i]!));
    }
    const out = keys.map((k) => tools.get(k));
    if (out.some((v) => v === undefined)) {
      // A catalogue whose vectors do not fit the bound: the oldest of its own made room for the newest.
      this.#warn('catalogue', 'invalid', `the catalogue's vectors (${texts.length} tools) are more than the ${MAX_TOOL_FLOATS} floats kept`);
      return undefined;
    }
    return out as Float32Array[];
  }

  /**
   * The query's vector, or undefined when the provider failed, took longer than timeoutMs or failed a
   * query less than QUERY_BACKOFF_MS ago. `scope` keeps tenants' queries apart (a cache hit must not tell
   * one tenant what another searched for).
   */
  async queryVector(query: string, scope: string): Promise<Float32Array | undefined> {
    const key = `${scope}\n${query}`;
    const known = this.#kept.queries.get(key);
    if (known) return known;
    if (Date.now() - this.#queriesFailedAt < QUERY_BACKOFF_MS) return undefined;
    const v = (await this.#embed('query', [query], this.config.timeoutMs))?.[0];
    if (v) this.#kept.queries.set(key, v);
    else this.#queriesFailedAt = Date.now();
    return v;
  }

  /**
   * The lexical ranking (ids, best first) fused with the semantic one (every tool by its vector's cosine
   * to the query, the best SEMANTIC_DEPTH of them) by reciprocal rank fusion, weighted by `weight`: a tool
   * either list ranks high comes first, and one the words missed entirely can still be found. Vectors of
   * another length than the query's (the provider's model changed under the same name) leave the lexical
   * ranking, said in the log.
   */
  fuse(lexical: readonly number[], query: Float32Array, tools: readonly Float32Array[], admits?: Uint8Array): number[] {
    const w = this.config.weight;
    if (w === 0) return [...lexical];
    if (tools.some((v) => v.length !== query.length)) {
      this.#warn('query', 'invalid', `the query's vector has ${query.length} dimensions and the tools' do not: has the model changed?`);
      return [...lexical];
    }
    const score = new Map<number, number>();
    lexical.forEach((id, rank) => score.set(id, (1 - w) / (RRF_K + rank + 1)));
    const cosine = tools.map((v) => dot(v, query));
    // Only tools the caller may see take the semantic ranks (a hidden one would push a visible one out of the depth).
    const semantic = cosine.map((_c, id) => id).filter((id) => admits === undefined || admits[id] === 1).sort((a, b) => cosine[b]! - cosine[a]! || a - b).slice(0, SEMANTIC_DEPTH);
    semantic.forEach((id, rank) => score.set(id, (score.get(id) ?? 0) + w / (RRF_K + rank + 1)));
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
      this.#warn(purpose, reason, (err as Error).message);
      return undefined;
    }
  }

  #warn(purpose: 'catalogue' | 'query', reason: EmbeddingsFailure, message: string): void {
    if (Date.now() - this.#lastWarned < WARN_EVERY_MS) return;
    this.#lastWarned = Date.now();
    this.#logger.warn({ url: redactedUrl(this.config.url), purpose, reason, err: message }, 'tool search: the embeddings provider failed; searches rank by words alone until it answers (said at most once a minute)');
  }
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** The provider's URL as a log line may show it (no credentials, no query string). */
function redactedUrl(url: string): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
}
