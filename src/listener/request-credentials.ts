/**
 * Where a request's bearer token may come from, read alike by every listener that takes one (the MCP
 * edge, the admin API): the Authorization header, once.
 */

/**
 * Every Authorization header's value, from the raw header list (name, value, name, value…): Node keeps only
 * the first of repeated ones in req.headers, so a reader of that took the first token and ignored the rest.
 */
export function authorizationHeaders(rawHeaders: readonly string[]): string[] {
  const authorization: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.length === 13 && rawHeaders[i]!.toLowerCase() === 'authorization') authorization.push(rawHeaders[i + 1]!);
  return authorization;
}
