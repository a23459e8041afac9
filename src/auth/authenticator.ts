import { errors, type JWTHeaderParameters, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { AuthConfig } from '../config/schema.js';
import { AuthError } from './auth-error.js';
import { isKeySetFetchFailure, type KeySetFetchLog } from './key-set-fetch.js';
import { keptTokenMaxAgeMs, keySource, remoteKeySet, type RemoteKeySet } from './key-source.js';
import type { Principal } from './principal.js';
import { checkAccessToken } from './token-checks.js';
import { VerifiedTokens } from './verified-tokens.js';
import { verifyJwt } from './verify-jwt.js';
import { BEARER_CREDENTIALS as BEARER } from '../jsonrpc/bearer-header.js';

export interface CredentialInput {
  /** Every Authorization header line as received (duplicates included). */
  authorization: string[];
  /** Whether the URL's query carries something that looks like a token. */
  tokenInQuery: boolean;
}

/** The scheme alone (RFC 7235: case-insensitive), followed by whitespace or nothing. */
const BEARER_SCHEME = /^Bearer(?:\s|$)/i;

function claimAt(payload: JWTPayload, path: string): unknown {
  if (path in payload) return payload[path];
  return path.split('.').reduce<unknown>((v, k) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), payload);
}

function scopesOf(v: unknown): Set<string> {
  if (typeof v === 'string') return new Set(v.split(' ').filter(Boolean));
  if (Array.isArray(v)) return new Set(v.filter((s): s is string => typeof s === 'string'));
  return new Set();
}

/** Verifies a request's bearer token and maps its claims to a principal. Never accepts a token from the URL. */
export class Authenticator {
  readonly #cfg: AuthConfig;
  readonly #audience: string[];
  readonly #getKey: JWTVerifyGetKey;
  readonly #verified: VerifiedTokens;
  /** Told of each request's token: whether it was verified before (a hit) or checked now. */
  readonly #onLookup: ((hit: boolean) => void) | undefined;

  /** The issuer's key set this one fetches from (a reload's Authenticator takes it over: see remoteKeySet). */
  readonly remoteKeys: RemoteKeySet | undefined;

  /**
   * `previous`: the one it replaces (a reload), whose fetched key set it keeps when the settings are the
   * same. `log`: where a key set fetch refused on our side (an answer past its size bound) is told.
   */
  constructor(cfg: AuthConfig, audience: string[], onLookup?: (hit: boolean) => void, previous?: Authenticator, log?: KeySetFetchLog) {
    this.#cfg = cfg;
    this.#audience = audience;
    this.remoteKeys = remoteKeySet(cfg, previous?.remoteKeys, log);
    this.#getKey = keySource(cfg, this.remoteKeys);
    this.#verified = new VerifiedTokens({ maxEntries: cfg.tokenCache.maxEntries, maxAgeMs: keptTokenMaxAgeMs(cfg) });
    this.#onLookup = onLookup;
  }

  /**
   * The request's principal: at once (no promise) when its token was verified before and is still
   * within its time (see VerifiedTokens), else once the token is verified. Refusals are AuthErrors,
   * thrown or rejected.
   */
  authenticate(input: CredentialInput): Principal | Promise<Principal> {
    const token = this.#token(input);
    const known = this.#verified.get(token, Date.now(), performance.now());
    this.#onLookup?.(known !== undefined);
    return known ?? this.#verify(token);
  }

  /** The bearer token of a request, or the AuthError that refuses it. */
  #token(input: CredentialInput): string {
    if (input.tokenInQuery) {
      throw new AuthError(400, 'invalid_request', 'token_in_query', 'access tokens in the query string are refused; send an Authorization: Bearer header');
    }
    if (input.authorization.length === 0) throw new AuthError(401, undefined, 'missing', 'an Authorization: Bearer token is required');
    if (input.authorization.length > 1) throw new AuthError(400, 'invalid_request', 'duplicate_header', 'more than one Authorization header');
    const value = input.authorization[0]!.trim();
    const m = BEARER.exec(value);
    if (m) return m[1]!;
    // RFC 6750 §3: another scheme (Basic, Token, an API key) is a request without bearer authentication,
    // answered as one with no header (401, the challenge, no error code), so the client finds the resource
    // metadata and can sign in; only a Bearer header whose token is malformed is invalid_request.
    if (!BEARER_SCHEME.test(value)) throw new AuthError(401, undefined, 'other_scheme', 'an Authorization: Bearer token is required (the header uses another scheme)');
    throw new AuthError(400, 'invalid_request', 'malformed_header', 'the Authorization header must be "Bearer <token>"');
  }

  async #verify(token: string): Promise<Principal> {
    let payload: JWTPayload;
    let protectedHeader: JWTHeaderParameters;
    try {
      ({ payload, protectedHeader } = await verifyJwt(token, this.#getKey, {
        issuer: this.#cfg.issuer,
        audience: this.#audience,
        algorithms: this.#cfg.algorithms,
        clockTolerance: this.#cfg.clockToleranceSec,
        requiredClaims: ['sub', 'exp'],
      }));
    } catch (err) {
      if (keySetUnavailable(err)) {
        throw new AuthError(503, undefined, 'jwks_unavailable', `the issuer's key set cannot be fetched right now (${unavailableDetail(err)}); retry shortly`);
      }
      throw new AuthError(401, 'invalid_token', reasonOf(err), `the access token is invalid: ${describe(err)}`);
    }
    checkAccessToken(protectedHeader, payload, this.#cfg, Math.floor(Date.now() / 1000));
    if (typeof payload.sub !== 'string' || payload.sub.length === 0) {
      // RFC 7519: "sub" is a string. Anything else could never match its session again.
      throw new AuthError(401, 'invalid_token', 'claim_sub', 'the access token\'s "sub" claim must be a non-empty string');
    }
    const tenant = claimAt(payload, this.#cfg.claims.tenant);
    if (typeof tenant !== 'string' || tenant.length === 0) {
      throw new AuthError(401, 'invalid_token', 'no_tenant', `the access token has no "${this.#cfg.claims.tenant}" claim naming a tenant`);
    }
    // Frozen: a kept principal is shared by every request that presents the same token.
    const audience = Object.freeze((Array.isArray(payload.aud) ? payload.aud : [payload.aud]).filter((a): a is string => typeof a === 'string'));
    const expiresAt = (payload.exp! + this.#cfg.clockToleranceSec) * 1000;
    const principal: Principal = Object.freeze({ issuer: payload.iss!, subject: payload.sub!, tenant, scopes: scopesOf(claimAt(payload, this.#cfg.claims.scopes)), audience, expiresAt });
    this.#verified.set(token, principal, payload.exp!, this.#cfg.clockToleranceSec, Date.now(), performance.now());
    return principal;
  }
}

/** A failure on our side (key set unreachable, timed out, answered non-200), not a bad token. */
function keySetUnavailable(err: unknown): boolean {
  // JWKSInvalid: the issuer's set is unusable (static keys are read at start): its fault, not the token's.
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid) return true;
  if (err instanceof errors.JOSEError) return err.code === 'ERR_JOSE_GENERIC' && /JSON Web Key Set/i.test(err.message);
  // Fetch failures (connection refused, DNS) surface as plain errors; so does a key that cannot be used
  // (unusableKey), which was taken for one: 503 "retry shortly", with no key set at all, to any token naming it.
  return isKeySetFetchFailure(err);
}

/**
 * A plain error on the way to the key (not jose's own refusal of the token, nor a fetch's): the key the
 * token names cannot be used here (WebCrypto cannot import it; jose refuses an RSA key under 2048 bits).
 */
function unusableKey(err: unknown): boolean {
  return !(err instanceof errors.JOSEError) && err instanceof Error;
}

/**
 * What a client is told of a failed key set fetch: jose's own fixed texts, else the system error code.
 * Never a fetch error's message, which can quote auth.jwksUrl whole, user name and password included.
 */
function unavailableDetail(err: unknown): string {
  if (err instanceof errors.JWKSTimeout) return 'the request timed out';
  if (err instanceof errors.JOSEError) return err.message;
  const code = (err as { cause?: { code?: unknown } }).cause?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? `the request failed: ${code}` : 'the request failed';
}

function reasonOf(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'expired';
  if (err instanceof errors.JWTClaimValidationFailed) return `claim_${err.claim}`;
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'signature';
  if (err instanceof errors.JWKSNoMatchingKey) return 'unknown_key';
  if (err instanceof errors.JOSEAlgNotAllowed) return 'algorithm';
  if (err instanceof errors.JWKSTimeout) return 'jwks_timeout';
  if (unusableKey(err)) return 'unusable_key';
  return 'malformed';
}

function describe(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'it has expired';
  if (err instanceof errors.JWTClaimValidationFailed) return `the "${err.claim}" claim is not acceptable (${err.reason})`;
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'the signature does not verify';
  if (err instanceof errors.JWKSNoMatchingKey) return 'no trusted key matches it';
  if (err instanceof errors.JOSEAlgNotAllowed) return 'its algorithm is not allowed';
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JOSEError) return (err as Error).message;
  // The key's own error text is not the client's business (it names the gateway's keys).
  if (unusableKey(err)) return 'the key it names is one this gateway cannot verify with (an RSA key under 2048 bits, or one that cannot be imported)';
  return 'it is not a well-formed JWT';
}
