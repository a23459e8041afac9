/**
 * The Authorization each refused request to a remote upstream carried, by its response. Its error body is
 * quoted to the client (see errorBodyDetail), and an upstream that echoes the token it was sent ("invalid
 * token: gho_…", an echo service's `"access_token":"…"`) echoed the gateway's own: an opaque token no pattern
 * finds, which for client-credentials is the shared one every tenant's calls go out with, and for token
 * exchange or a vault link one user's. Only the request knows which token went (it is refreshed meanwhile).
 * Weak: kept while the response is, and read only on its way to an error.
 */
const SENT = new WeakMap<object, string>();

/** Kept for a refusal only: a 2xx answer costs one comparison. */
export function keepSentCredentials(res: { statusCode: number }, headers: Record<string, string>): void {
  if ((res.statusCode < 200 || res.statusCode >= 300) && headers.authorization) SENT.set(res, headers.authorization);
}

/** The Authorization value the request `res` answers carried, if the gateway sent one (see keepSentCredentials). */
export function sentCredentials(res: object): string | undefined {
  return SENT.get(res);
}
