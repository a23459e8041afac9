import { readFileSync } from 'node:fs';
import { importJWK, SignJWT, type JWK } from 'jose';

export interface DevTokenOptions {
  keyFile: string;
  issuer: string;
  audience: string | string[];
  tenant: string;
  subject: string;
  scopes: string[];
  ttlSeconds: number;
  tenantClaim: string;
}

/** Signs a token with a development private key (JWK), for the quick start and tests. */
export async function signDevToken(o: DevTokenOptions): Promise<string> {
  const jwk = JSON.parse(readFileSync(o.keyFile, 'utf8')) as JWK;
  const alg = jwk.alg ?? (jwk.kty === 'OKP' ? 'EdDSA' : jwk.kty === 'EC' ? 'ES256' : 'RS256');
  const key = await importJWK(jwk, alg);
  return new SignJWT({ [o.tenantClaim]: o.tenant, ...(o.scopes.length > 0 ? { scope: o.scopes.join(' ') } : {}) })
    .setProtectedHeader({ alg, ...(jwk.kid ? { kid: jwk.kid } : {}), typ: 'JWT' })
    .setIssuer(o.issuer)
    .setAudience(o.audience)
    .setSubject(o.subject)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + o.ttlSeconds)
    .sign(key);
}

/** "90s", "15m", "12h", "7d" or plain seconds. */
export function parseTtl(text: string): number {
  const m = /^(\d+)([smhd]?)$/.exec(text.trim());
  if (!m) throw new Error(`bad --ttl "${text}": use e.g. 900, 15m, 12h or 7d`);
  return Number(m[1]) * { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[m[2] as '' | 's' | 'm' | 'h' | 'd'];
}
