import { request } from 'undici';
import type { EmbeddingsConfig } from '../config/tools-schema.js';

/** Why an embeddings request gave nothing: what the log line and the metric say. */
export type EmbeddingsFailure = 'timeout' | 'unreachable' | 'http' | 'invalid';

export class EmbeddingsError extends Error {
  readonly reason: EmbeddingsFailure;

  constructor(reason: EmbeddingsFailure, message: string) {
    super(message);
    this.name = 'EmbeddingsError';
    this.reason = reason;
  }
}

/**
 * A provider's answer is read only this far: room for a large vector per input (3,072 floats as JSON are
 * about 60 KB), not whatever a broken server streams. A refusal's body only for its message.
 */
const MAX_BYTES_PER_INPUT = 256 * 1024;
const MAX_ERROR_BYTES = 4096;

/** A vector scaled to length 1, so that a dot product is the cosine similarity. */
function unit(values: readonly unknown[], at: number): Float32Array {
  const v = new Float32Array(values.length);
  let norm = 0;
  for (let i = 0; i < values.length; i++) {
    const x = values[i];
    if (typeof x !== 'number' || !Number.isFinite(x)) throw new EmbeddingsError('invalid', `embedding ${at} holds a value that is not a finite number`);
    v[i] = x;
    norm += x * x;
  }
  if (norm === 0) return v;
  const scale = 1 / Math.sqrt(norm);
  for (let i = 0; i < v.length; i++) v[i] = v[i]! * scale;
  return v;
}

/**
 * An OpenAI-compatible embeddings endpoint: POST {model, input} and read {data: [{embedding, index}]}.
 * Every answer is checked (one vector per input, in index order, all of one length, finite numbers):
 * a provider that answers something else is an error, never a silently wrong ranking.
 */
export class EmbeddingsClient {
  readonly #config: EmbeddingsConfig;

  constructor(config: EmbeddingsConfig) {
    this.#config = config;
  }

  /** Unit vectors of the inputs, in their order; `timeoutMs` bounds the whole request. */
  async embed(inputs: readonly string[], timeoutMs: number): Promise<Float32Array[]> {
    if (inputs.length === 0) return [];
    const c = this.#config;
    const body = JSON.stringify({ model: c.model, input: inputs, encoding_format: 'float', ...(c.dimensions !== undefined ? { dimensions: c.dimensions } : {}) });
    let res;
    try {
      res = await request(c.url, {
        method: 'POST',
        headers: { ...c.headers, 'content-type': 'application/json', accept: 'application/json' },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      const timedOut = (err as Error).name === 'TimeoutError' || (err as Error).name === 'AbortError';
      throw new EmbeddingsError(timedOut ? 'timeout' : 'unreachable', timedOut ? `no answer within ${timeoutMs} ms` : `cannot reach the embeddings URL: ${(err as Error).message}`);
    }
    const limit = res.statusCode === 200 ? Math.max(1024 * 1024, inputs.length * MAX_BYTES_PER_INPUT) : MAX_ERROR_BYTES;
    const chunks: Buffer[] = [];
    let bytes = 0;
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        chunks.push(chunk);
        bytes += chunk.length;
        if (bytes > limit) {
          if (res.statusCode !== 200) break;
          throw new EmbeddingsError('invalid', `the answer is larger than ${limit} bytes`);
        }
      }
    } catch (err) {
      res.body.destroy();
      if (err instanceof EmbeddingsError) throw err;
      const name = (err as Error).name;
      if (name === 'TimeoutError' || name === 'AbortError') throw new EmbeddingsError('timeout', `the answer did not arrive within ${timeoutMs} ms`);
      throw new EmbeddingsError('unreachable', `the answer broke off: ${(err as Error).message}`);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    if (res.statusCode !== 200) throw new EmbeddingsError('http', `HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
    return this.#vectors(text, inputs.length);
  }

  #vectors(text: string, expected: number): Float32Array[] {
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      throw new EmbeddingsError('invalid', 'the answer is not JSON');
    }
    const data = (doc as { data?: unknown } | null)?.data;
    if (!Array.isArray(data) || data.length !== expected) throw new EmbeddingsError('invalid', `expected ${expected} embeddings in "data", got ${Array.isArray(data) ? data.length : 'none'}`);
    const out = new Array<Float32Array | undefined>(expected);
    let dims = -1;
    for (const [i, item] of data.entries()) {
      const { embedding, index } = (item ?? {}) as { embedding?: unknown; index?: unknown };
      // `index` says which input a vector is for; a provider that omits it answers in input order.
      const at = index === undefined ? i : index;
      if (typeof at !== 'number' || !Number.isInteger(at) || at < 0 || at >= expected || out[at] !== undefined) throw new EmbeddingsError('invalid', `embedding ${i} has a missing, repeated or out-of-range index`);
      if (!Array.isArray(embedding) || embedding.length === 0) throw new EmbeddingsError('invalid', `embedding ${i} is not an array of numbers (base64 answers are not read)`);
      if (dims >= 0 && embedding.length !== dims) throw new EmbeddingsError('invalid', `embeddings of different lengths (${dims} and ${embedding.length})`);
      dims = embedding.length;
      out[at] = unit(embedding, i);
    }
    return out as Float32Array[];
  }
}
