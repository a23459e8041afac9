import { blanked, errorBodyDetail, secretsOf } from './error-body-detail.js';
/**
 * The Authorization each refused request to a remote upstream carried, by its response. Its error body is
 * quoted to the client (see errorBodyDetail), and an upstream that echoes the token it was sent ("invalid
 * token: gho_…", an echo service's `"access_token":"…"`) echoed the gateway's own: an opaque token no pattern
 * finds, which for client-credentials is the shared one every tenant's calls go out with, and for token
 * exchange or a vault link one user's. Only the request knows which token went (it is refreshed meanwhile).
 * Weak: kept while the response is, and read only on its way to an error.
 */
const SENT = new WeakMap<object, string>();

/** A secret that JSON writes as itself (no quote, backslash or control character): blanked in a JSON text, it leaves valid JSON. */
const JSON_PLAIN = /^[^"\\\x00-\x1f]+$/;

/** Kept for a refusal only: a 2xx answer costs one comparison. */
export function keepSentCredentials(res: { statusCode: number }, headers: Record<string, string>): void {
  if ((res.statusCode < 200 || res.statusCode >= 300) && headers.authorization) SENT.set(res, headers.authorization);
}

/** The Authorization value the request `res` answers carried, if the gateway sent one (see keepSentCredentials). */
export function sentCredentials(res: object): string | undefined {
  return SENT.get(res);
}

/**
 * A refused request's answer body without the credentials the gateway sent with it (the Authorization the
 * request carried, the configured `headers`' values): a 2026-07-28 upstream refuses with a 4xx whose body is
 * a JSON-RPC error, relayed to the client as it is, and one echoing the token in its message or data echoed
 * the gateway's (before 2026-12-07). Only secrets JSON writes as themselves are blanked, so the text stays
 * the JSON it was; a 2xx answer is returned untouched.
 */
export function refusalWithoutCredentials(res: { statusCode: number }, text: string, configured: Record<string, string> | undefined): string {
  if (res.statusCode >= 200 && res.statusCode < 300) return text;
  let out = text;
  const sent = SENT.get(res);
  if (sent !== undefined) out = plainRedacted(out, sent);
  if (configured) for (const value of Object.values(configured)) out = plainRedacted(out, value);
  return out;
}

/** `text` without the forms of `value` (secretsOf) that JSON writes as themselves. */
function plainRedacted(text: string, value: string): string {
  for (const secret of secretsOf(value)) if (JSON_PLAIN.test(secret)) text = blanked(text, secret);
  return text;
}

/** The fields of a token request that are secrets (RFC 6749, 7636, 8693): never quoted back. */
const SECRET_FIELDS = ['subject_token', 'actor_token', 'refresh_token', 'code', 'code_verifier', 'client_secret'];

/**
 * An authorization server's words in a token endpoint's refusal (its `error`, `error_description`), as the
 * user's error or the log quotes them: without what the request sent (the client's HTTP Basic `authorization`,
 * in every form secretsOf knows, and the form's secret fields), Bearer credentials or JWTs, cut to `max`
 * characters after. A hostile or buggy server echoing the request there had the gateway's client secret and
 * the user's tokens written into the message and the log (before 2026-12-07).
 */
export function tokenRefusalText(text: string, authorization: string | undefined, form: URLSearchParams, max: number): string {
  const sent: Record<string, string> = {};
  for (const field of SECRET_FIELDS) {
    const value = form.get(field);
    if (value !== null) sent[field] = value;
  }
  return errorBodyDetail(text, sent, authorization).slice(0, max);
}
