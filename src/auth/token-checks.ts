import type { JWTHeaderParameters, JWTPayload } from 'jose';
import type { AuthConfig } from '../config/schema.js';
import { AuthError } from './auth-error.js';

/** A media type as RFC 7515 §4.1.9 compares it: case-insensitive, "application/" implied without a slash. */
function mediaType(typ: string): string {
  const t = typ.toLowerCase();
  return t.includes('/') ? t : `application/${t}`;
}

/**
 * What jose's jwtVerify leaves to the caller, on a token whose signature and claims it accepted:
 *
 * - `typ` (RFC 9068 §4): an issuer signs other JWTs with the same keys (logout tokens, security events,
 *   DPoP proofs); one of those presented as an access token is refused. jose checks one typ only.
 * - `iat` in the future beyond the clock tolerance: jose checks it only with maxTokenAge, which would also
 *   make iat required, and tokens without one have always been accepted.
 */
export function checkAccessToken(header: JWTHeaderParameters, payload: JWTPayload, cfg: AuthConfig, nowSec: number): void {
  const typ = header.typ;
  const typed = typeof typ === 'string' && cfg.tokenTypes.some((t) => mediaType(t) === mediaType(typ));
  if (!typed && !(typ === undefined && cfg.allowUntypedTokens)) {
    const what = typ === undefined ? 'it has no "typ" header' : `its "typ" header is not one of auth.tokenTypes (${cfg.tokenTypes.join(', ')})`;
    throw new AuthError(401, 'invalid_token', 'typ', `the access token is invalid: ${what}`);
  }
  if (typeof payload.iat === 'number' && payload.iat > nowSec + cfg.clockToleranceSec) {
    throw new AuthError(401, 'invalid_token', 'claim_iat', 'the access token is invalid: the "iat" claim is not acceptable (it is in the future)');
  }
}
