/**
 * Where a request's bearer token may come from, read alike by every listener that takes one (the MCP
 * edge, the admin API): the Authorization header, once, and never the query string.
 */

/**
 * A JWT's start (a JSON header in base64url, then the payload) anywhere in the query: as the whole query
 * (`?eyJ…`) or after a scheme (`?auth=Bearer%20eyJ…`), where only a parameter's value starting with one was
 * refused before 2026-12-07 (no MCP or admin route takes a query that holds one). Only where a base64url run
 * begins (or after a percent escape): unanchored, a query of "eyJ" repeated was scanned once from each, 100 ms a request.
 */
const JWT_LIKE = /(?:^|[^A-Za-z0-9_-]|%[0-9A-Fa-f]{2})eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\./;

/** Whether a request URL's query carries a token: an access_token, token or id_token parameter, or a JWT anywhere in it. */
export function tokenInQuery(url: string): boolean {
  const q = url.indexOf('?');
  if (q === -1 || q === url.length - 1) return false;
  const query = url.slice(q + 1);
  return /(^|&)(access_token|token|id_token)=/i.test(query) || JWT_LIKE.test(query);
}

/**
 * Every Authorization header's value, from the raw header list (name, value, name, value…): Node keeps only
 * the first of repeated ones in req.headers, so a reader of that took the first token and ignored the rest.
 */
export function authorizationHeaders(rawHeaders: readonly string[]): string[] {
  const authorization: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.length === 13 && rawHeaders[i]!.toLowerCase() === 'authorization') authorization.push(rawHeaders[i + 1]!);
  return authorization;
}
