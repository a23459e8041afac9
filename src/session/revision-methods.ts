import { methodSpec } from '../jsonrpc/methods.js';

/**
 * Whether a message of `method` may be sent to a client that negotiated `version`: a method its revision
 * defines, or one MCP defines in no revision (an extension's, passed on as ever). An upstream speaks the
 * newest 2025 revision whatever its client negotiated: a 2025-06-18 client was sent
 * notifications/elicitation/complete (2025-11-25's), which its revision has no method for.
 */
export function sendableIn(method: string, version: string | undefined): boolean {
  const spec = methodSpec(method);
  return spec === undefined || version === undefined || (spec.revisions as readonly string[]).includes(version);
}
