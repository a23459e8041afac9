import { createPublicKey, createSecretKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createLocalJWKSet, createRemoteJWKSet, errors, type JWK, type JWTVerifyGetKey } from 'jose';
import type { AuthConfig } from '../config/schema.js';

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth'];

/** Reads a PEM (SPKI or a private key, whose public half is used) or a JWK / JWKS file into public JWKs. */
export function readPublicJwks(file: string): JWK[] {
  const text = readFileSync(file, 'utf8');
  if (text.includes('-----BEGIN')) {
    const jwk = createPublicKey(text).export({ format: 'jwk' }) as JWK;
    return [jwk];
  }
  const doc = JSON.parse(text) as JWK | { keys: JWK[] };
  const keys = 'keys' in doc && Array.isArray(doc.keys) ? doc.keys : [doc as JWK];
  return keys.map((k) => {
    if (k.kty === 'oct') throw new Error(`${file}: symmetric keys belong in auth.hmacSecret, not in auth.keys`);
    const pub: Record<string, unknown> = { ...k };
    for (const m of PRIVATE_MEMBERS) delete pub[m];
    return pub as JWK;
  });
}

/**
 * The verification key for a token: HMAC only when explicitly enabled, then the static keys, then the
 * issuer's JWKS. jose refreshes the JWKS when a token names an unknown kid, at most once per cooldown,
 * so keys rotate without a restart.
 */
export function keySource(cfg: AuthConfig): JWTVerifyGetKey {
  const staticKeys = cfg.keys.flatMap(readPublicJwks);
  const local = staticKeys.length > 0 ? createLocalJWKSet({ keys: staticKeys }) : undefined;
  const remote = cfg.jwksUrl
    ? createRemoteJWKSet(new URL(cfg.jwksUrl), {
        cooldownDuration: cfg.jwksCooldownMs,
        cacheMaxAge: cfg.jwksCacheMaxAgeMs,
        timeoutDuration: cfg.jwksTimeoutMs,
      })
    : undefined;
  const hmac: KeyObject | undefined = cfg.allowHmac && cfg.hmacSecret ? createSecretKey(Buffer.from(cfg.hmacSecret, 'utf8')) : undefined;

  return async (header, token) => {
    if (header.alg?.startsWith('HS')) {
      // Never verify an HS token with a public key (the classic RS/HS confusion).
      if (!hmac) throw new errors.JOSEAlgNotAllowed('HMAC tokens are not accepted');
      return hmac;
    }
    if (local) {
      try {
        return await local(header, token);
      } catch (err) {
        if (!remote || !(err instanceof errors.JWKSNoMatchingKey)) throw err;
      }
    }
    if (remote) return remote(header, token);
    throw new errors.JWKSNoMatchingKey();
  };
}
