import type { EdgeRequest } from './edge-exchange.js';

/** Names the Streamable HTTP session on every request after initialize (and on its answer). */
export const SESSION_HEADER = 'mcp-session-id';

/** A request header's value (the first, when it was sent more than once). */
export function header(req: EdgeRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
