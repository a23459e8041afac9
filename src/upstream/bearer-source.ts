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
 * When a token living `ttlMs` from `now` is renewed: `skewMs` before it expires, but never earlier than
 * half its life, so that a token shorter-lived than the skew is still used (it was fetched again for
 * every request). A token that is already expired (ttl 0 or below) is not kept.
 */
export function renewAt(now: number, ttlMs: number, skewMs: number): number {
  return now + ttlMs - Math.min(skewMs, Math.max(ttlMs, 0) / 2);
}
