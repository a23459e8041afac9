import { readFileSync } from 'node:fs';
import { compactVerify, createLocalJWKSet, decodeProtectedHeader, importJWK, SignJWT, type JWK } from 'jose';
import type { AuthConfig } from '../config/schema.js';
import { readPublicJwks } from './key-source.js';

export interface DevTokenOptions {
  keyFile: string;
  issuer: string;
  audience: string | string[];
  tenant: string;
  subject: string;
  scopes: string[];
  ttlSeconds: number;
  tenantClaim: string;
  /** Where the gateway reads scopes (auth.claims.scopes): in "scope" whatever it said, they were no scopes to it. */
  scopesClaim?: string;
  /** The "typ" header (default at+jwt, RFC 9068): one the gateway's auth.tokenTypes accepts (devTokenType). */
  typ?: string;
}

/** at+jwt where auth.tokenTypes takes it (the default does), else the first type it names. */
export function devTokenType(tokenTypes: readonly string[]): string {
  const at = tokenTypes.find((t) => ['at+jwt', 'application/at+jwt'].includes(t.toLowerCase()));
  return at ?? tokenTypes[0] ?? 'at+jwt';
}

/** Signs a token with a development private key (JWK), for the quick start and tests. */
export async function signDevToken(o: DevTokenOptions): Promise<string> {
  const jwk = JSON.parse(readFileSync(o.keyFile, 'utf8')) as JWK;
  const alg = jwk.alg ?? algorithmOf(jwk);
  const key = await importJWK(jwk, alg);
  return new SignJWT({ [o.tenantClaim]: o.tenant, ...(o.scopes.length > 0 ? { [o.scopesClaim ?? 'scope']: o.scopes.join(' ') } : {}) })
    .setProtectedHeader({ alg, ...(jwk.kid ? { kid: jwk.kid } : {}), typ: o.typ ?? 'at+jwt' })
    .setIssuer(o.issuer)
    .setAudience(o.audience)
    .setSubject(o.subject)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + o.ttlSeconds)
    .sign(key);
}

/** The algorithm a key without "alg" signs: an EC key's is its curve's (a P-384 key cannot sign ES256). */
function algorithmOf(jwk: JWK): string {
  if (jwk.kty === 'OKP') return 'EdDSA';
  if (jwk.kty === 'EC') return { 'P-384': 'ES384', 'P-521': 'ES512' }[jwk.crv ?? ''] ?? 'ES256';
  return 'RS256';
}

/**
 * Why a gateway with this auth config would refuse `jwt` (from signDevToken with keyFile), as the end of a
 * sentence; undefined when one of its static keys (auth.keys) verifies it under an allowed algorithm, as
 * the gateway's own key source would. A JWKS (auth.jwksUrl) is the identity provider's: not fetched, and
 * never taken to hold a development key.
 */
export async function devTokenRefusal(jwt: string, keyFile: string, cfg: Pick<AuthConfig, 'keys' | 'algorithms' | 'jwksUrl'>): Promise<string | undefined> {
  const alg = decodeProtectedHeader(jwt).alg ?? '';
  if (!(cfg.algorithms as readonly string[]).includes(alg)) return `the key signs ${alg}, which auth.algorithms (${cfg.algorithms.join(', ')}) does not allow`;
  const keys = cfg.keys.flatMap(readPublicJwks);
  // One key at a time: a token naming no kid matches every key of its type, which a set refuses as
  // ambiguous (JWKSMultipleMatchingKeys) where the gateway tries each (verifyJwt).
  for (const key of keys) {
    try {
      // A key naming no kid (a PEM file) is a candidate whatever kid the token names, as in keySource.
      const set = createLocalJWKSet({ keys: [key] });
      await compactVerify(jwt, (header, token) => set(key.kid === undefined ? { ...header, kid: undefined } : header, token), { algorithms: [alg] });
      return undefined;
    } catch {
      // Not this key (or not its kid): the next; none verifies it: said below.
    }
  }
  const own = keys.length > 0 ? "none of auth.keys is the key's public half" : 'it has no auth.keys';
  return cfg.jwksUrl ? `${own}; it takes tokens signed by the identity provider whose keys are at auth.jwksUrl ${cfg.jwksUrl}: get one from there` : own;
}

/**
 * "90s", "15m", "12h", "7d" or plain seconds; undefined for anything else, and for zero (a token expired
 * as it is issued, which the gateway refuses).
 */
export function parseTtl(text: string): number | undefined {
  const m = /^(\d+)([smhd]?)$/.exec(text.trim());
  const seconds = m ? Number(m[1]) * { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[m[2] as '' | 's' | 'm' | 'h' | 'd'] : 0;
  return seconds > 0 ? seconds : undefined;
}
