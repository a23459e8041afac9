import type { Principal } from './principal.js';

interface Entry {
  principal: Principal;
  /** Epoch ms after which the entry is not used: the token's exp (with the clock tolerance) or maxAgeMs after it was verified. */
  until: number;
}

/**
 * Longer tokens are verified every time, never kept: the cache's memory is then at most maxEntries times
 * this (80 MiB at the default 10,000), whatever an issuer puts in its tokens. Typical access tokens are
 * under 2 KiB.
 */
const MAX_KEPT_LENGTH = 8192;

export interface VerifiedTokensOptions {
  /** At most this many tokens are kept; the oldest verified goes first. 0 keeps none. */
  maxEntries: number;
  /** A token is verified again at least this often, whatever its exp says. */
  maxAgeMs: number;
}

/**
 * Tokens this gateway has verified, by their exact text, with the principal they map to. A signature
 * check costs 190–290 µs of CPU (RS256, ES256, EdDSA through jose's WebCrypto, Node 20), more than the
 * rest of a proxied call, and a client sends the same token with every request until it expires.
 *
 * What a hit may skip is only what cannot change for the same bytes: the signature, issuer, audience and
 * claims. Time can: an entry is used only while the token's `exp` (plus the clock tolerance jose would
 * allow) has not passed, and never longer than `maxAgeMs` after its verification, so a key withdrawn
 * from the issuer's key set stops being honoured within that time (jose itself keeps a fetched key set
 * for `jwksCacheMaxAgeMs`, 10 minutes by default, so the default 60 s adds nothing to that window).
 * Failures are never kept: a forged or expired token is checked in full each time. The cache belongs
 * to one Authenticator, so a reload that changes keys, issuer or audience starts empty.
 */
export class VerifiedTokens {
  readonly #o: VerifiedTokensOptions;
  /** Insertion order is verification order: the first key is the oldest. */
  readonly #entries = new Map<string, Entry>();

  constructor(o: VerifiedTokensOptions) {
    this.#o = o;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The principal of a token verified before and still within its time, else undefined. */
  get(token: string, now: number): Principal | undefined {
    const e = this.#entries.get(token);
    if (e === undefined) return undefined;
    if (now < e.until) return e.principal;
    this.#entries.delete(token);
    return undefined;
  }

  /** Keeps a token just verified; `expSec` is its exp claim, `toleranceSec` the clock tolerance it was checked with. */
  set(token: string, principal: Principal, expSec: number, toleranceSec: number, now: number): void {
    if (this.#o.maxEntries === 0 || token.length > MAX_KEPT_LENGTH) return;
    const until = Math.min((expSec + toleranceSec) * 1000, now + this.#o.maxAgeMs);
    if (!(until > now)) return;
    this.#entries.delete(token);
    while (this.#entries.size >= this.#o.maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(token, { principal, until });
  }
}
