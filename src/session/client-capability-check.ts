import { clientCapabilityNeeds } from '../jsonrpc/methods.js';

/** Which client capability a server→client request needs. */
const NEEDS: Record<string, string> = clientCapabilityNeeds();

/**
 * Why a server→client request cannot go to a client with these declared capabilities, or undefined: a
 * request it did not declare it can answer is refused here rather than sent (it would only fail there).
 */
export function undeliverable(capabilities: Record<string, any>, method: string, params: Record<string, unknown> | undefined): string | undefined {
  const need = NEEDS[method];
  if (need && !capabilities[need]) return `the client did not declare the "${need}" capability, so "${method}" cannot be delivered`;
  if (method === 'elicitation/create' && params?.mode === 'url' && !capabilities.elicitation?.url) return 'the client did not declare URL-mode elicitation';
  return undefined;
}
