import type { webcrypto } from 'node:crypto';
import { errors, jwtVerify, type JWTVerifyGetKey, type JWTVerifyOptions, type JWTVerifyResult } from 'jose';

/** At most this many signature checks per token: a set of hundreds of keys of one type must not cost hundreds per forged token. */
const MAX_KEYS_TRIED = 10;

/**
 * jwtVerify against a key set, trying each of its keys when a token names no `kid` and several keys of
 * its algorithm qualify: an issuer that rotates keys without naming them has the old and the new one
 * published at once. jose leaves that to the caller: its key sets throw JWKSMultipleMatchingKeys,
 * iterable over the candidates. Only a bad signature moves on to the next key; any other refusal (the
 * claims, an expiry) is the token's own and stands. With static keys and the issuer's set both
 * configured, the candidates are those of both (keySource), the first MAX_KEYS_TRIED of them tried.
 */
export async function verifyJwt(token: string, getKey: JWTVerifyGetKey, options: JWTVerifyOptions): Promise<JWTVerifyResult> {
  try {
    return await jwtVerify(token, getKey, options);
  } catch (err) {
    if (!(err instanceof errors.JWKSMultipleMatchingKeys)) throw err;
    let tried = 0;
    for await (const key of err as unknown as AsyncIterable<webcrypto.CryptoKey>) {
      try {
        return await jwtVerify(token, key, options);
      } catch (inner) {
        if (!(inner instanceof errors.JWSSignatureVerificationFailed)) throw inner;
      }
      if (++tried === MAX_KEYS_TRIED) break;
    }
    throw tried === 0 ? new errors.JWKSNoMatchingKey() : new errors.JWSSignatureVerificationFailed();
  }
}
