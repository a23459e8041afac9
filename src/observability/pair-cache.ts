import type { ProtobufBytes } from './protobuf-bytes.js';

/** Per attribute key: its values' encodings, and whether its values recur enough to be worth keeping. */
interface KeyEntry {
  values: Map<string, Uint8Array>;
  lookups: number;
  hits: number;
  /** Set when the key's values turned out not to recur (a request id): looked up no more. */
  off: boolean;
}

const MAX_VALUES = 256;
/** After this many lookups a key whose values were found less than half the time is given up. */
const TRIAL = 256;

/**
 * The encoded KeyValue fields (tag, length, key, string value) of span attributes whose values recur:
 * most of a span's attributes are the same few pairs on every call (the method, the tool, the endpoint,
 * the upstream and its instance, the transport). Copying a pair's bytes costs a fraction of encoding
 * it again character by character (V8 reads each character through the string's representation). A key
 * whose values do not recur (request ids) is given up after a trial, so that it costs only one lookup
 * per span; each key keeps at most 256 values (begun anew when full).
 */
export class PairCache {
  readonly #keys = new Map<string, KeyEntry>();

  /** The pair's bytes, or undefined (then write it and remember()). */
  find(key: string, value: string): Uint8Array | undefined {
    let entry = this.#keys.get(key);
    if (entry === undefined) this.#keys.set(key, (entry = { values: new Map(), lookups: 0, hits: 0, off: false }));
    if (entry.off) return undefined;
    entry.lookups++;
    const bytes = entry.values.get(value);
    if (bytes !== undefined) {
      entry.hits++;
      return bytes;
    }
    if (entry.lookups >= TRIAL && entry.hits * 2 < entry.lookups) {
      entry.off = true;
      entry.values.clear();
    }
    return undefined;
  }

  /** Keeps the bytes just written for the pair (from `start` to the writer's position). */
  remember(key: string, value: string, out: ProtobufBytes, start: number): void {
    const entry = this.#keys.get(key);
    if (entry === undefined || entry.off) return;
    if (entry.values.size >= MAX_VALUES) entry.values.clear();
    entry.values.set(value, out.copy(start));
  }
}
