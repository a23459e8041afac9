/**
 * Where a remote upstream's `Authorization: Bearer` comes from: the gateway's own client-credentials
 * token, or one user's exchanged token. Never the client's own token.
 */
export interface BearerSource {
  /** A token to send now (cached, refreshed before it expires). */
  token(): Promise<string>;
  /** The upstream refused the token: fetch a new one next time. */
  invalidate(): void;
}
