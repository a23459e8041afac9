/**
 * A refused request at the HTTP level, shaped for RFC 6750: 400 invalid_request, 401 invalid_token
 * (or no token at all), 403 insufficient_scope. The edge turns it into the status and the
 * WWW-Authenticate header.
 */
export class AuthError extends Error {
  /** 503: the token could not be checked (the issuer's key set is unreachable) — not the client's fault. */
  readonly status: 400 | 401 | 403 | 503;
  /** RFC 6750 error code; undefined for a request that simply carried no credentials. */
  readonly error: 'invalid_request' | 'invalid_token' | 'insufficient_scope' | undefined;
  /** For metrics: why, in a word. */
  readonly reason: string;
  readonly scope: string | undefined;

  constructor(status: 400 | 401 | 403 | 503, error: AuthError['error'], reason: string, description: string, scope?: string) {
    super(description);
    this.name = 'AuthError';
    this.status = status;
    this.error = error;
    this.reason = reason;
    this.scope = scope;
  }
}
