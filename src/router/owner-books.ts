import { matchesTemplate, templateMatcher, type TemplateMatcher } from './uri-template.js';

/** The most URIs (or templates) one map of owners learned from lists keeps: the endpoint's, and a session's own. */
export const MAX_LEARNED_URIS = 10_000;
/** The longest URI matched against the templates (see templateOwner); real URIs are far shorter. */
export const MAX_MATCHED_URI_CHARS = 8192;

/**
 * Learned from a list: kept newest last, and at the bound the one listed longest ago makes room. A bound
 * that only refused (as templates had) left whatever an upstream listed after 10,000 others, over a long
 * life, unroutable until a reload; one that kept a re-listed entry in its old place evicted live ones first.
 */
export function learn<V>(map: Map<string, V>, key: string, upstream: V): void {
  map.delete(key);
  if (map.size >= MAX_LEARNED_URIS) map.delete(map.keys().next().value!);
  map.set(key, upstream);
}

type Matched = TemplateMatcher & { upstream: string };
type Prefixed = { upstream: string; length: number };

/**
 * Resource templates learned from lists, and the upstream of each: the endpoint's book (from shared
 * upstreams), and a session's own (from its own instances: see UriOwners).
 */
export class TemplateOwners {
  /** Exact uriTemplate → upstream, for completion/complete on a template. */
  readonly #exact = new Map<string, string>();
  /** Exact uriTemplate → the URIs it describes and its upstream: a URI goes where a template matches it. */
  readonly #matchers = new Map<string, Matched>();
  /** URI template prefixes (text before the first "{") → upstream. */
  readonly #prefixes = new Map<string, string>();

  learn(template: string, upstream: string): void {
    learn(this.#exact, template, upstream);
    const matcher = templateMatcher(template);
    if (matcher) learn(this.#matchers, template, { ...matcher, upstream });
    else this.#matchers.delete(template);
    const i = template.indexOf('{');
    const prefix = i === -1 ? template : template.slice(0, i);
    if (prefix.length > 0) learn(this.#prefixes, prefix, upstream);
  }

  ownerOf(template: string): string | undefined {
    return this.#exact.get(template);
  }

  /** The template of this book matching `uri` with the most literal text, if it has as much as `than`'s (ties: the newest). */
  match(uri: string, than: Matched | undefined): Matched | undefined {
    for (const m of this.#matchers.values()) if ((!than || m.literal >= than.literal) && matchesTemplate(m, uri)) than = m;
    return than;
  }

  /** The longest text before a template's first "{" that starts `uri`, if as long as `than`'s. */
  byPrefix(uri: string, than: Prefixed | undefined): Prefixed | undefined {
    // Two prefixes of one URI of the same length are the same text: one key, so no tie within a book.
    for (const [prefix, upstream] of this.#prefixes) if (prefix.length >= (than?.length ?? 1) && uri.startsWith(prefix)) than = { upstream, length: prefix.length };
    return than;
  }

  clear(): void {
    this.#exact.clear();
    this.#matchers.clear();
    this.#prefixes.clear();
  }
}

/**
 * The upstream whose template matches a URI (the most literal text wins), else the one whose template's text
 * before its first "{" is the longest start of it; `over`'s (a session's own book) wins a tie with `book`'s.
 * Two upstreams' templates often share that start (`notes://{id}`, `notes://{owner}/{id}`): by it alone,
 * every URI of both went to whichever was listed last, and the other's were read "not found".
 */
export function templateOwner(uri: string, book: TemplateOwners, over?: TemplateOwners): string | undefined {
  // Matching costs the URI's length times the template's, per template: a client's URI of megabytes (the
  // body limit allows 4 MiB) cost half a second a template. Longer ones go by the prefix alone.
  if (uri.length <= MAX_MATCHED_URI_CHARS) {
    const matched = over ? over.match(uri, book.match(uri, undefined)) : book.match(uri, undefined);
    if (matched) return matched.upstream;
  }
  return (over ? over.byPrefix(uri, book.byPrefix(uri, undefined)) : book.byPrefix(uri, undefined))?.upstream;
}
