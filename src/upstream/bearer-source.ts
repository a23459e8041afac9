/**
 * Where a remote upstream's `Authorization: Bearer` comes from: the gateway's own client-credentials
 * token, or one user's exchanged token. Never the client's own token.
 */
export interface BearerSource {
  /** A token to send now (cached, refreshed before it expires). */
  token(): Promise<string>;
  /**
   * The upstream refused `refused` (the token it was sent): fetch a new one next time, unless the token
   * has been replaced meanwhile (by another request's refresh, or another replica's), which is then used.
   */
  invalidate(refused: string): void;
}

/**
 * The bearer token of a token endpoint's 200 answer, or `fail`'s error when it holds none: an error-shaped
 * 200 would go upstream as "Bearer ", a DPoP or MAC token as the wrong kind (RFC 6749 §5.1 requires
 * token_type). One rule for the three token clients, each failing in its own terms.
 */
export function bearerTokenOf(doc: { access_token?: unknown; token_type?: unknown }, fail: (why: string) => Error): string {
  if (typeof doc.access_token !== 'string' || doc.access_token === '') throw fail('the token endpoint sent no access_token');
  if (typeof doc.token_type !== 'string' || doc.token_type.toLowerCase() !== 'bearer') throw fail(`the token endpoint issued a token of type ${String(doc.token_type)}, not a bearer token`);
  return doc.access_token;
}

/**
 * When a token living `ttlMs` from `now` is renewed: `skewMs` before it expires, but never earlier than
 * half its life, so that a token shorter-lived than the skew is still used (it was fetched again for
 * every request). A token that is already expired (ttl 0 or below) is not kept.
 */
export function renewAt(now: number, ttlMs: number, skewMs: number): number {
  return now + ttlMs - Math.min(skewMs, Math.max(ttlMs, 0) / 2);
}

/**
 * The shortest life a token is kept for (renewed after half of it: at most one fetch per 15 s). An
 * expires_in of 0 or below, unreadable, or a fraction of a second made the token be fetched (or
 * exchanged, or refreshed) again for every request to the upstream; one that is really expired is
 * refused by the upstream, and a 401 fetches a new one at once (invalidate).
 */
const MIN_LIFE_MS = 30_000;

/**
 * The longest: a life past what a Date holds (expires_in 1e13) broke every listing of links (RangeError),
 * and an infinite one (1e308) was stored as null, so the token was refreshed at every request.
 */
const MAX_LIFE_MS = 10 * 365 * 86_400_000;

/**
 * A token endpoint's expires_in (seconds, a number or a numeric string as some servers send it) as a
 * life in ms, at least MIN_LIFE_MS and at most MAX_LIFE_MS; `unstatedMs` when the answer has none (RFC 6749
 * §5.1 makes it optional).
 */
export function tokenLifeMs(expiresIn: unknown, unstatedMs: number): number {
  if (expiresIn === undefined || expiresIn === null) return unstatedMs;
  const sec = typeof expiresIn === 'string' && expiresIn.trim() !== '' ? Number(expiresIn) : expiresIn;
  return typeof sec === 'number' && Number.isFinite(sec) ? Math.min(Math.max(sec * 1000, MIN_LIFE_MS), MAX_LIFE_MS) : MIN_LIFE_MS;
}
