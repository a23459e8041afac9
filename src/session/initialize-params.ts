import { capabilitiesProblem } from '../jsonrpc/client-capabilities.js';

/**
 * The most a client's initialize capabilities may take, as JSON: 16 KiB. They are kept for the session's
 * life, in memory and (with Redis) in the session record every replica reads; only the body limit
 * (server.maxBodyBytes, 4 MB) bounded them, so each session could put megabytes into the store. Real
 * clients declare a few hundred bytes (roots, sampling, elicitation, a few experimental flags).
 * clientInfo needs no bound here: only its known string fields are kept, each cut (client-info.ts).
 */
export const MAX_CLIENT_CAPABILITIES_BYTES = 16 * 1024;

/** Why an initialize's params cannot open a session (the -32602 message), or undefined when they can. */
export function initializeParamsProblem(p: Record<string, unknown>): string | undefined {
  if (typeof p.protocolVersion !== 'string' || !p.capabilities || typeof p.capabilities !== 'object' || !p.clientInfo || typeof p.clientInfo !== 'object') {
    return 'Invalid params: initialize needs protocolVersion, capabilities and clientInfo';
  }
  const caps = capabilitiesProblem(p.capabilities);
  if (caps) return `Invalid params: initialize's capabilities: ${caps}`;
  const bytes = Buffer.byteLength(JSON.stringify(p.capabilities));
  if (bytes <= MAX_CLIENT_CAPABILITIES_BYTES) return undefined;
  return `Invalid params: initialize's capabilities are ${bytes} bytes as JSON, more than the ${MAX_CLIENT_CAPABILITIES_BYTES} bytes a session keeps; declare only the capabilities the client has`;
}
