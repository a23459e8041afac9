import { createHash } from 'node:crypto';
import { decodeJwt } from 'jose';
import { GatewayError } from '../errors.js';
import type { UpstreamUser } from './upstream-user.js';
import { BEARER_CREDENTIALS as BEARER } from '../jsonrpc/bearer-header.js';

/**
 * Why no token is there to exchange (SubjectTokens.missing): `shared`, the caller is a standing several of a
 * subject's tokens share (UpstreamCaller.sharedByTokens); `expired`, the token it last presented has; `unkept`,
 * none was kept: verified while no upstream exchanged tokens (before a reload gave the config its first).
 */
export type NoSubjectToken = 'shared' | 'expired' | 'unkept';

/**
 * The refusal of a call for want of a token to exchange (details.awaitsConsent: only the user's next request
 * ends it, see awaitsUser). Its message says which case it is, so the user knows what to send: one message
 * for all told a 2025 session whose token simply expired of a configuration reload, maybe its cause.
 */
export function noSubjectToken(upstream: string, why: NoSubjectToken): GatewayError {
  const message =
    why === 'shared'
      ? `upstream "${upstream}" is called with an exchange of each client's own token, and this request reached a standing several of your tokens share (made before a configuration reload gave the endpoint that upstream): send the request again`
      : why === 'expired'
        ? `the gateway holds no unexpired token of yours to exchange for upstream "${upstream}": the one your client last sent here has expired; send the request again with a fresh token`
        : `the gateway holds no token of this request's to exchange for upstream "${upstream}": it was verified before a configuration reload gave the gateway its first token-exchange upstream, and tokens are kept only from then on; send the request again`;
  return new GatewayError('SWB_UPSTREAM_CREDENTIAL_REFUSED', message, { upstream, reason: 'no_subject_token', awaitsConsent: true });
}

/**
 * Each verified principal's token, for token exchange (RFC 8693 subject_token) and nothing else. The edge
 * records it after verifying the request's signature, issuer, audience and expiry, on the principal the
 * request was judged by; a session's principal is its latest request's, so an exchange for a session uses
 * the token that session presented. Keyed by the principal object itself (one per verified token), never
 * by the user: a user's latest token, whichever session brought it, served every session of theirs (a
 * session opened with a narrow token was served with a broader one). Held only in memory, only while its
 * principal is (a WeakMap: no sweep) and until the token's own expiry, never logged (no enumerable state:
 * a stray log of this object shows nothing), and never sent anywhere but the configured token endpoint.
 */
export class SubjectTokens {
  readonly #tokens = new WeakMap<object, { token: string; expiresAt: number; identity?: string }>();
  /** Principals whose token was dropped at its expiry: told apart from one never kept (see missing). */
  readonly #expired = new WeakSet<object>();

  /** After the request's token verified: `principal` is what it verified to, `authorization` the header it came in. */
  remember(principal: object, authorization: string | undefined): void {
    const m = authorization ? BEARER.exec(authorization.trim()) : null;
    if (!m) return;
    const token = m[1]!;
    if (this.#tokens.get(principal)?.token === token) return;
    let exp: unknown;
    try {
      exp = decodeJwt(token).exp;
    } catch {
      return; // verified tokens are JWTs; anything else is not kept
    }
    if (typeof exp !== 'number') return;
    this.#tokens.set(principal, { token, expiresAt: exp * 1000 });
    this.#expired.delete(principal);
  }

  /**
   * The token of the session `user` names (its latest request's), while it has not expired, or undefined
   * (the session's next request brings one). Without a session: none (no other session's token stands in).
   * Nor for a session several clients' tokens share (UpstreamCaller.sharedByTokens): its latest token was
   * whichever client's came last, and a listen opened with a narrow token was served by an upstream session
   * made with a broader one's exchange.
   */
  current(user: UpstreamUser): string | undefined {
    if (user.session?.sharedByTokens) return undefined;
    const principal = user.session?.principal;
    const t = principal ? this.#tokens.get(principal) : undefined;
    if (!t) return undefined;
    if (Date.now() < t.expiresAt) return t.token;
    this.#tokens.delete(principal!);
    this.#expired.add(principal!);
    return undefined;
  }

  /** Why current(user) found no token: what the refusal tells the user (noSubjectToken). */
  missing(user: UpstreamUser): NoSubjectToken {
    if (user.session?.sharedByTokens) return 'shared';
    const principal = user.session?.principal;
    return principal !== undefined && this.#expired.has(principal) ? 'expired' : 'unkept';
  }

  /**
   * What tells the principal's token from any other, never the token itself (a SHA-256 digest, made once per
   * principal): a modern standing of an endpoint that exchanges tokens is one token's (see ModernSessions).
   * Undefined when no token is kept for it (none of the gateway's upstreams exchanges tokens, or it expired).
   */
  identity(principal: object): string | undefined {
    const t = this.#tokens.get(principal);
    if (!t) return undefined;
    return (t.identity ??= createHash('sha256').update(t.token).digest('base64url'));
  }

  toJSON(): Record<string, never> {
    return {};
  }
}
