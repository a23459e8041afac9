import { decodeJwt } from 'jose';
import { userKey, type UpstreamUser } from './upstream-user.js';
import { BEARER_CREDENTIALS as BEARER } from '../jsonrpc/bearer-header.js';

/** Expired entries are swept every this many writes, so users who left do not stay in memory. */
const SWEEP_EVERY = 1024;

/**
 * Each user's latest validated access token, for token exchange (RFC 8693 subject_token) and nothing
 * else. The edge records it after verifying the request's signature, issuer, audience and expiry;
 * a per-user upstream credential reads it when it needs a fresh exchange. Held only in memory, only
 * until the token's own expiry, never logged (no enumerable state: a stray log of this object shows
 * nothing), and never sent anywhere but the configured token endpoint.
 */
export class SubjectTokens {
  readonly #tokens = new Map<string, { token: string; expiresAt: number }>();
  #writes = 0;

  /** After the request's token verified: `authorization` is the header it came in. */
  remember(user: UpstreamUser, authorization: string | undefined): void {
    const m = authorization ? BEARER.exec(authorization.trim()) : null;
    if (!m) return;
    const token = m[1]!;
    const key = userKey(user);
    if (this.#tokens.get(key)?.token === token) return;
    let exp: unknown;
    try {
      exp = decodeJwt(token).exp;
    } catch {
      return; // verified tokens are JWTs; anything else is not kept
    }
    if (typeof exp !== 'number') return;
    this.#tokens.set(key, { token, expiresAt: exp * 1000 });
    if (++this.#writes % SWEEP_EVERY === 0) this.#sweep();
  }

  /** The user's latest token still valid, or undefined (the user's next request brings one). */
  current(user: UpstreamUser): string | undefined {
    const key = userKey(user);
    const t = this.#tokens.get(key);
    if (!t) return undefined;
    if (Date.now() < t.expiresAt) return t.token;
    this.#tokens.delete(key);
    return undefined;
  }

  forget(user: UpstreamUser): void {
    this.#tokens.delete(userKey(user));
  }

  get size(): number {
    return this.#tokens.size;
  }

  #sweep(): void {
    const now = Date.now();
    for (const [k, t] of this.#tokens) if (t.expiresAt <= now) this.#tokens.delete(k);
  }

  toJSON(): Record<string, number> {
    return { users: this.#tokens.size };
  }
}
