import { createHash, timingSafeEqual } from 'node:crypto';
import { authorizationHeaders, tokenInQuery } from '../listener/request-credentials.js';
import type { AdminCredentials } from './admin-target.js';

export interface AdminRefusal {
  /**
   * 503: the token could not be checked now (the issuer's key set unreachable), which refuses nothing.
   * 500: the gateway's own credentials cannot be used (admin.tokenFile unreadable, or too short).
   * 400: the token is not where it is taken from (see refusePlacement).
   */
  status: 400 | 401 | 403 | 500 | 503;
  message: string;
}

/**
 * Any value after "Bearer ": the static token is the operator's own choice (admin.token is any string of
 * 32 characters or more), and RFC 6750's narrow form refused one with "!", ":" or a space, which a header
 * carries. A JWT is still held to its own form by the verifier.
 */
const BEARER = /^Bearer +(\S.*)$/i;

/** Equal strings in constant time: both are hashed first, so neither length nor content leaks. */
function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/**
 * A request whose token is not in one Authorization header, refused before any token is looked at, as
 * the edge refuses it (400 invalid_request): repeated headers were read as their first alone (Node keeps
 * only that one in req.headers), so a request with the operator's token first was served whatever came
 * after it; a token in the query string was not looked at, so one sent with a valid header was served and
 * left in every proxy's log and browser history. Refused with no admin auth configured too.
 */
export function refusePlacement(rawHeaders: readonly string[], url: string): AdminRefusal | undefined {
  if (tokenInQuery(url)) return { status: 400, message: 'a token in the query string is refused: send it as an Authorization: Bearer header' };
  if (authorizationHeaders(rawHeaders).length > 1) return { status: 400, message: 'more than one Authorization header: send the token in one' };
  return undefined;
}

/**
 * Whether a request may use the admin API: the static token (admin.token / tokenFile), or a JWT the
 * gateway's auth accepts that carries the admin scope. With neither configured (only allowed on
 * loopback, config-checked) every local caller is let in. Returns undefined when admitted.
 */
export async function refuseAdmin(authorization: string | undefined, creds: AdminCredentials): Promise<AdminRefusal | undefined> {
  if (creds.token === undefined && creds.verifyJwt === undefined) return undefined;
  const m = authorization === undefined ? null : BEARER.exec(authorization.trim());
  if (!m) return { status: 401, message: 'an Authorization: Bearer token is required (admin.token, or a JWT with the admin scope)' };
  const bearer = m[1]!;
  if (creds.token !== undefined && sameSecret(bearer, creds.token)) return undefined;
  // A JWT has two dots; anything else was meant as the static token.
  if (creds.verifyJwt === undefined || bearer.split('.').length !== 3) return { status: 401, message: 'the token is not valid for the admin API' };
  let scopes: ReadonlySet<string>;
  try {
    scopes = await creds.verifyJwt(bearer);
  } catch (err) {
    // The key set out of reach says nothing of the token: told as the edge tells it (503, retry), not as a
    // bad token, which an operator would replace for nothing and a console would take as its end.
    if ((err as { status?: unknown }).status === 503) return { status: 503, message: `the token cannot be checked right now: ${(err as Error).message}` };
    return { status: 401, message: `the token is not valid for the admin API: ${(err as Error).message}` };
  }
  if (!scopes.has(creds.scope)) return { status: 403, message: `the token lacks the admin scope "${creds.scope}"` };
  return undefined;
}

/**
 * refuseAdmin over credentials read for this request. Credentials that cannot be read (an unusable
 * admin.tokenFile) refuse it with 500 and their reason, as a refusal like the others: thrown, each
 * request wrote an error line with a stack, whoever sent it, at the rate it was sent.
 */
export async function refuseWith(authorization: string | undefined, credentials: () => AdminCredentials): Promise<AdminRefusal | undefined> {
  let creds: AdminCredentials;
  try {
    creds = credentials();
  } catch (err) {
    return { status: 500, message: (err as Error).message };
  }
  return refuseAdmin(authorization, creds);
}
