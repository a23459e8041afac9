import type { Principal } from './principal.js';

interface Entry {
  principal: Principal;
  /** Epoch ms after which the entry is not used: the token's exp (with the clock tolerance), or maxAgeMs after its check. */
  until: number;
  /** The same maxAgeMs on the monotonic clock: a wall clock stepped back does not keep an entry longer. */
  monoUntil: number;
  /** What the entry is counted as against MAX_BYTES. */
  bytes: number;
}

/**
 * What the kept entries may weigh in all (tokens and principals, counted generously): the cache's memory
 * is bounded whatever an issuer puts in its tokens (long tokens, thousands of scopes), not only by
 * maxEntries. An entry heavier than MAX_ENTRY_BYTES is never kept: it is verified every time.
 */
const MAX_BYTES = 32 * 1024 * 1024;
const MAX_ENTRY_BYTES = 16 * 1024;

export interface VerifiedTokensOptions {
  /** At most this many tokens are kept; the oldest verified goes first. 0 keeps none. */
  maxEntries: number;
  /** A token is verified again at least this often, whatever its exp says. */
  maxAgeMs: number;
}

/** An entry's weight: the token and the principal's strings, each scope with a Set entry's overhead. */
function weightOf(token: string, p: Principal): number {
  let bytes = token.length + p.issuer.length + p.subject.length + p.tenant.length + 256;
  for (const s of p.scopes) bytes += s.length + 64;
  for (const a of p.audience ?? []) bytes += a.length + 16;
  return bytes;
}

/**
 * Tokens this gateway has verified, by their exact text, with the principal they map to. A signature
 * check costs 190–290 µs of CPU (RS256, ES256, EdDSA through jose's WebCrypto, Node 20), more than the
 * rest of a proxied call, and a client sends the same token with every request until it expires.
 *
 * What a hit may skip is only what cannot change for the same bytes: the signature, issuer, audience and
 * claims. Time can: an entry is used only while the token's `exp` (plus the clock tolerance jose would
 * allow) has not passed, and never longer than `maxAgeMs` after its verification, on the wall clock and
 * on the monotonic one. With a JWKS the Authenticator gives it at most half of the key set's age, so
 * that a withdrawn key stops working as soon as it would without the cache (key-source.ts). Failures
 * are never kept: a forged or expired token is checked in full each time. The cache belongs to one
 * Authenticator, so a reload starts empty.
 */
export class VerifiedTokens {
  readonly #o: VerifiedTokensOptions;
  /** Insertion order is verification order: the first key is the oldest. */
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;

  constructor(o: VerifiedTokensOptions) {
    this.#o = o;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The principal of a token verified before and still within its time, else undefined. */
  get(token: string, now: number, mono: number): Principal | undefined {
    const e = this.#entries.get(token);
    if (e === undefined) return undefined;
    if (now < e.until && mono < e.monoUntil) return e.principal;
    this.#drop(token, e);
    return undefined;
  }

  /** Keeps a token just verified; `expSec` is its exp claim, `toleranceSec` the clock tolerance it was checked with. */
  set(token: string, principal: Principal, expSec: number, toleranceSec: number, now: number, mono: number): void {
    if (this.#o.maxEntries === 0) return;
    const until = Math.min((expSec + toleranceSec) * 1000, now + this.#o.maxAgeMs);
    const bytes = weightOf(token, principal);
    if (!(until > now) || bytes > MAX_ENTRY_BYTES) return;
    const old = this.#entries.get(token);
    if (old) this.#drop(token, old);
    while (this.#entries.size > 0 && (this.#entries.size >= this.#o.maxEntries || this.#bytes + bytes > MAX_BYTES)) {
      const [oldest, e] = this.#entries.entries().next().value!;
      this.#drop(oldest, e);
    }
    this.#entries.set(token, { principal, until, monoUntil: mono + this.#o.maxAgeMs, bytes });
    this.#bytes += bytes;
  }

  #drop(token: string, e: Entry): void {
    this.#entries.delete(token);
    this.#bytes -= e.bytes;
  }
}
