import { capabilityName, missingClientCapability } from '../jsonrpc/client-capabilities.js';

/**
 * Why a server→client request cannot go to a client with these declared capabilities, or undefined: a
 * request it did not declare it can answer is refused here rather than sent (it would only fail there).
 */
export function undeliverable(capabilities: Record<string, any>, method: string, params: Record<string, unknown> | undefined): string | undefined {
  const missing = missingClientCapability(capabilities, method, params);
  return missing && `the client did not declare ${capabilityName(missing)}, so "${method}" cannot be delivered`;
}
