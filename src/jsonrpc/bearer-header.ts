/**
 * An `Authorization: Bearer <token>` header: the scheme case-insensitive (RFC 7235 §2.1), one or more
 * spaces before the token (RFC 6750 §2.1: `"Bearer" 1*SP b64token`), the token in b64token's characters.
 * One pattern for the edge that verifies the token and for what keeps it for token exchange: a header one
 * accepted and the other did not left a verified user without the subject token an exchange needs.
 */
export const BEARER_CREDENTIALS = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;
