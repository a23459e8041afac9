import type { EndpointView } from './endpoint-view.js';

/** The most URIs (or templates) one map of owners learned from lists keeps: the endpoint's, and a session's own. */
export const MAX_LEARNED_URIS = 10_000;

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

/** What UriOwners needs of its endpoint (EndpointView). */
type OwnerBook = Pick<EndpointView, 'pool' | 'learnUri' | 'ownerOfUri'>;

/**
 * Who owns each resource URI, as one session routes it. A URI a shared upstream listed is the endpoint's to
 * know (every session reaches that instance); one listed by an instance not every session shares (the
 * session's own, its tenant's, its user's: their resources are often the client's own data) is this
 * session's alone, and comes first for it. Learned for the whole endpoint, a client whose own notes server
 * listed a URI another upstream serves sent every other session's read of it to that other session's own
 * notes server, "not found" there, for as long as it listed again now and then.
 */
export class UriOwners {
  readonly #endpoint: OwnerBook;
  readonly #own = new Map<string, string>();

  constructor(endpoint: OwnerBook) {
    this.#endpoint = endpoint;
  }

  /** `upstream` listed `uri` to this session. */
  learn(uri: string, upstream: string): void {
    if (this.#endpoint.pool(upstream)?.config.sharing === 'shared') this.#endpoint.learnUri(uri, upstream);
    else learn(this.#own, uri, upstream);
  }

  ownerOf(uri: string): string | undefined {
    return this.#own.get(uri) ?? this.#endpoint.ownerOfUri(uri);
  }

  /** A reload rebound the session: what it learned may name an upstream that is gone (as the endpoint forgets its own). */
  clear(): void {
    this.#own.clear();
  }
}
