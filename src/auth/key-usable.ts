import { createPublicKey, type JsonWebKey } from 'node:crypto';
import type { JWK } from 'jose';

/** jose refuses to verify RS* and PS* signatures with a shorter RSA key. */
const RSA_MIN_BITS = 2048;

/**
 * Why the gateway can never verify a token with this public key (a static key of auth.keys), or undefined.
 * Such a key was read at load without a word, and every token naming it was then refused 401 (unusable_key)
 * with nothing to tell the operator why. Only the key's form is described, never its numbers. A key marked
 * for encryption (`use` other than `sig`) is never a candidate for a signature, so it is not judged.
 */
export function unusableKeyReason(jwk: JWK): string | undefined {
  if (jwk.use !== undefined && jwk.use !== 'sig') return undefined;
  let bits: number | undefined;
  try {
    bits = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' }).asymmetricKeyDetails?.modulusLength;
  } catch {
    return `its ${String(jwk.kty)} numbers make no valid public key, so it cannot be imported`;
  }
  if (jwk.kty === 'RSA' && (bits ?? 0) < RSA_MIN_BITS) return `it is an RSA key of ${bits ?? 0} bits, and one under ${RSA_MIN_BITS} bits verifies nothing`;
  return undefined;
}

/** How a warning names the key: its kid, else its place in the file (1-based). */
export function keyName(jwk: JWK, index: number): string {
  return typeof jwk.kid === 'string' ? `kid ${JSON.stringify(jwk.kid)}` : `key ${index + 1} (no kid)`;
}
