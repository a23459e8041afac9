/**
 * Whether `uri` is `subscribed` or one of its sub-resources. The spec (2025-06-18 on,
 * ResourceUpdatedNotification) lets an update's uri be "a sub-resource of the one that the client actually
 * subscribed to" without saying what one is. Here `uri` is one when it is `subscribed` itself, or begins
 * with it and either
 *  - the next character is '/', '?' or '#' (file:///dir → file:///dir/a.txt, file:///dir?page=2, file:///dir#top), or
 *  - `subscribed` ends with '/' (file:///dir/ → file:///dir/a.txt).
 * Why these: they are where RFC 3986 parts a URI (path segments, query, fragment), so a parent is one by the
 * URI's own structure. A bare prefix would make file:///doc a parent of file:///doc2 and repo://a of
 * repo://ab: a client would hear of resources it neither subscribed to nor descends from. A URI with a dot
 * segment ("/../", "/%2e%2e", "/./") is only ever its own: file:///docs/../secret begins like a child of
 * file:///docs and names no resource under it. No other normalisation (case, percent-encoding): the
 * upstream names both URIs, and an update it names otherwise than the subscription is not guessed to be one
 * of it. Whether the client may learn of the update at all is its tenant's rules' to say, on the updated
 * URI itself, wherever it is delivered (not on the parent it came under).
 */
export function isSubResource(uri: string, subscribed: string): boolean {
  if (uri.length === subscribed.length) return uri === subscribed;
  return uri.length > subscribed.length && uri.startsWith(subscribed) && atBoundary(uri, subscribed.length) && !DOT_SEGMENT.test(uri);
}

/** A "." or ".." segment, spelled plainly or percent-encoded (no nested repetition: linear in the URI). */
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?:[/?#]|$)/i;

/** Whether `uri`'s first `k` characters (0 < k < uri.length) can name a parent of it (see isSubResource). */
function atBoundary(uri: string, k: number): boolean {
  const next = uri.charCodeAt(k);
  return next === 0x2f /* / */ || next === 0x3f /* ? */ || next === 0x23 /* # */ || uri.charCodeAt(k - 1) === 0x2f;
}

/**
 * Subscribed URIs, each with a value (its subscribers), looked up by an updated URI: `covering` finds every
 * subscribed URI the update is a sub-resource of. It walks the updated URI's own parents and looks each up,
 * and only at the lengths some subscribed URI has: not one string comparison per subscription per update,
 * and no more work for an upstream's very long URI than the subscribed URIs' lengths allow.
 */
export class SubscribedUris<V> {
  readonly #byUri = new Map<string, V>();
  /** length → how many subscribed URIs have it. */
  readonly #lengths = new Map<number, number>();

  get size(): number {
    return this.#byUri.size;
  }

  get(uri: string): V | undefined {
    return this.#byUri.get(uri);
  }

  has(uri: string): boolean {
    return this.#byUri.has(uri);
  }

  keys(): IterableIterator<string> {
    return this.#byUri.keys();
  }

  entries(): IterableIterator<[string, V]> {
    return this.#byUri.entries();
  }

  set(uri: string, value: V): this {
    if (!this.#byUri.has(uri)) this.#lengths.set(uri.length, (this.#lengths.get(uri.length) ?? 0) + 1);
    this.#byUri.set(uri, value);
    return this;
  }

  delete(uri: string): boolean {
    if (!this.#byUri.delete(uri)) return false;
    const n = this.#lengths.get(uri.length)! - 1;
    if (n === 0) this.#lengths.delete(uri.length);
    else this.#lengths.set(uri.length, n);
    return true;
  }

  /** Calls `each` with the value of every subscribed URI `uri` is (a sub-resource of), each once. */
  covering(uri: string, each: (value: V) => void): void {
    if (this.#byUri.size === 0) return;
    const exact = this.#byUri.get(uri);
    if (exact !== undefined) each(exact);
    if (DOT_SEGMENT.test(uri)) return;
    // Each parent length once (a URI with "//" is a parent by both rules at one length: found once, not twice).
    if (this.#lengths.size < uri.length) {
      for (const k of this.#lengths.keys()) if (k > 0 && k < uri.length) this.#at(uri, k, each);
    } else {
      for (let k = 1; k < uri.length; k++) if (this.#lengths.has(k)) this.#at(uri, k, each);
    }
  }

  /** Whether `uri` is a subscribed URI or a sub-resource of one. */
  covers(uri: string): boolean {
    let found = false;
    this.covering(uri, () => void (found = true));
    return found;
  }

  #at(uri: string, k: number, each: (value: V) => void): void {
    if (!atBoundary(uri, k)) return;
    const v = this.#byUri.get(uri.slice(0, k));
    if (v !== undefined) each(v);
  }
}
