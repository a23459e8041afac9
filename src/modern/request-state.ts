import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Principal } from '../auth/principal.js';
import { RequestStateError } from './request-state-error.js';
import { deriveKey, KEY_ID_BYTES, type DerivedKey, type RequestStateKeyring } from './request-state-keys.js';
import type { UsedTokens } from './used-tokens.js';

export type RequestStatePrincipal = Pick<Principal, 'issuer' | 'subject' | 'tenant'>;

/** What a sealed requestState binds. */
export interface RequestStateClaims {
  principal: RequestStatePrincipal;
  method: string;
  /** The tool name, resource URI or prompt name as the client sent it. */
  target: string;
  /** The endpoint's path the request was made on: a state is not presented on another endpoint. */
  endpoint: string;
  /** digestParams() of the original request's params. */
  argumentsDigest: string;
  /** The held upstream call this state continues. */
  continuationId: string;
  /** The replica holding that call. */
  replicaId: string;
  issuedAt: number;
  expiresAt: number;
  /** Unique per sealed state (a continuation may have several rounds): what the single-use record claims. */
  stateId: string;
}

/** What the caller seals; the sealer adds issuedAt and (unless given) stateId and expiresAt = now + ttlMs. */
export type RequestStateInput = Omit<RequestStateClaims, 'issuedAt' | 'expiresAt' | 'stateId'> & { expiresAt?: number; stateId?: string };

/** What the retry must match: who presents the state, and which request it presents it on. */
export type RequestStateExpectation = Pick<RequestStateClaims, 'principal' | 'method' | 'target' | 'endpoint' | 'argumentsDigest'>;

export interface RequestStateSealerOptions {
  keys: RequestStateKeyring;
  /** How long a state may be presented (modern.continuationTtlMs). */
  ttlMs: number;
  /** The single-use record redeem() claims in. */
  used: UsedTokens;
  /** Epoch milliseconds; injected for tests. */
  now?: () => number;
}

const VERSION = 'swb1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Far above any state the gateway seals (a few hundred characters); longer input is not read at all. */
const MAX_TOKEN_CHARS = 65_536;
const SEGMENT = /^[A-Za-z0-9_-]+$/;
// Segment lengths in base64url characters; a truncated or padded token fails on them before any crypto.
const KEY_ID_CHARS = Math.ceil((KEY_ID_BYTES * 4) / 3);
const IV_CHARS = Math.ceil((IV_BYTES * 4) / 3);
const TAG_CHARS = Math.ceil((TAG_BYTES * 4) / 3);

type Sealed = [string, string, string, string, string, string, string, string, number, number, string, string];

/**
 * The requestState the gateway mints when it turns a 2025 upstream's server→client requests into an
 * `input_required` result, and opens when the client's retry echoes it. The client holds it, so it is
 * sealed (AES-256-GCM: nobody without the key can read or alter it) and bound to the caller, the
 * request, the held upstream call and an expiry; redeem() also makes it single use.
 *
 * Format: `swb1.<key id>.<iv>.<ciphertext>.<tag>`, each part base64url. The version and key id are
 * authenticated too (the GCM additional data), so a token cannot be moved to another version or key.
 * Sealing uses the current key; opening uses whichever configured key has the token's id (rotation:
 * list the old key under requestStatePreviousKeys for one TTL after changing it).
 */
export class RequestStateSealer {
  readonly #current: DerivedKey;
  readonly #keys: readonly DerivedKey[];
  readonly #ttlMs: number;
  readonly #used: UsedTokens;
  readonly #now: () => number;

  constructor(options: RequestStateSealerOptions) {
    this.#current = deriveKey(options.keys.current);
    this.#keys = [this.#current, ...options.keys.previous.map(deriveKey)];
    this.#ttlMs = options.ttlMs;
    this.#used = options.used;
    // Read at each use, like every other clock read in the gateway (a captured Date.now escapes a mocked clock).
    this.#now = options.now ?? (() => Date.now());
  }

  seal(input: RequestStateInput): string {
    const issuedAt = Math.floor(this.#now());
    const expiresAt = Math.floor(input.expiresAt ?? issuedAt + this.#ttlMs);
    if (!Number.isSafeInteger(expiresAt)) throw new Error('requestState needs an expiry in epoch milliseconds');
    const { principal: p } = input;
    const stateId = input.stateId ?? randomBytes(12).toString('base64url');
    const sealed: Sealed = [p.issuer, p.subject, p.tenant, input.method, input.target, input.argumentsDigest, input.continuationId, input.replicaId, issuedAt, expiresAt, stateId, input.endpoint];
    const key = this.#current;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key.aes, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(additionalData(key.id));
    const body = Buffer.concat([cipher.update(JSON.stringify(sealed), 'utf8'), cipher.final()]);
    const token = [VERSION, key.id, iv, body, cipher.getAuthTag()].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
    if (token.length > MAX_TOKEN_CHARS) throw new Error(`requestState would be ${token.length} characters, more than ${MAX_TOKEN_CHARS} (target too long)`);
    return token;
  }

  /**
   * The claims of a state presented with a retry, once it is proven genuine, unexpired, the caller's and
   * this request's; otherwise a RequestStateError naming why. `token` is whatever the client sent.
   * Does not claim it: see redeem().
   */
  open(token: unknown, expect: RequestStateExpectation): RequestStateClaims {
    const claims = this.#unseal(token);
    if (this.#now() >= claims.expiresAt) throw new RequestStateError('expired');
    const p = claims.principal;
    if (p.issuer !== expect.principal.issuer || p.subject !== expect.principal.subject || p.tenant !== expect.principal.tenant) {
      throw new RequestStateError('wrong-principal');
    }
    if (claims.method !== expect.method || claims.target !== expect.target || claims.endpoint !== expect.endpoint || claims.argumentsDigest !== expect.argumentsDigest) {
      throw new RequestStateError('wrong-request');
    }
    return claims;
  }

  /**
   * open(), then claims the state's id: only a state that passed every check is used up (a bad retry
   * does not burn the caller's good one), and a second redeem of the same state is 'replayed'.
   */
  async redeem(token: unknown, expect: RequestStateExpectation): Promise<RequestStateClaims> {
    const claims = this.open(token, expect);
    await this.use(claims);
    return claims;
  }

  /** Uses up a state open() has proven (a second use is 'replayed'): for a caller that opened it already. */
  async use(claims: RequestStateClaims): Promise<void> {
    if (!(await this.#used.claim(claims.stateId, claims.expiresAt))) throw new RequestStateError('replayed');
  }

  /** Whether a state's id was used up (by any replica sharing the record); claims nothing. */
  spent(stateId: string): Promise<boolean> {
    return this.#used.claimed(stateId);
  }

  #unseal(token: unknown): RequestStateClaims {
    const parts = typeof token === 'string' && token.length <= MAX_TOKEN_CHARS ? token.split('.') : [];
    if (parts.length !== 5 || parts[0] !== VERSION) throw new RequestStateError('malformed');
    const segments = parts.slice(1);
    const [kid, iv, body, tag] = segments as [string, string, string, string];
    const shaped = kid.length === KEY_ID_CHARS && iv.length === IV_CHARS && tag.length === TAG_CHARS && body.length >= 2;
    if (!shaped || !segments.every((s) => SEGMENT.test(s))) throw new RequestStateError('malformed');
    const bytes = segments.map((s) => Buffer.from(s, 'base64url')) as [Buffer, Buffer, Buffer, Buffer];
    // base64url has spare bits in a last character: a changed spare bit decodes to the same bytes, but
    // the token is not the one issued.
    if (bytes.some((b, i) => b.toString('base64url') !== segments[i])) throw new RequestStateError('tampered');
    const plain = this.#decrypt(...bytes);
    if (!plain) throw new RequestStateError('tampered');
    const claims = parseSealed(plain);
    if (!claims) throw new RequestStateError('malformed');
    return claims;
  }

  #decrypt(kid: Buffer, iv: Buffer, body: Buffer, tag: Buffer): string | undefined {
    // Ids are short, so two keys may share one: each key with the token's id is tried.
    for (const key of this.#keys) {
      if (!key.id.equals(kid)) continue;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key.aes, iv, { authTagLength: TAG_BYTES });
        decipher.setAAD(additionalData(key.id));
        decipher.setAuthTag(tag);
        return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
      } catch {
        // not this key
      }
    }
    return undefined;
  }
}

function additionalData(keyId: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${VERSION}.`, 'ascii'), keyId]);
}

/** Authenticated bytes are the gateway's own; a shape it did not write is a state of some other version. */
function parseSealed(text: string): RequestStateClaims | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(v) || v.length !== 12) return undefined;
  const strings = [0, 1, 2, 3, 4, 5, 6, 7, 10, 11].every((i) => typeof v[i] === 'string');
  if (!strings || !Number.isSafeInteger(v[8]) || !Number.isSafeInteger(v[9])) return undefined;
  const s = v as Sealed;
  return {
    principal: { issuer: s[0], subject: s[1], tenant: s[2] },
    method: s[3],
    target: s[4],
    endpoint: s[11],
    argumentsDigest: s[5],
    continuationId: s[6],
    replicaId: s[7],
    issuedAt: s[8],
    expiresAt: s[9],
    stateId: s[10],
  };
}
