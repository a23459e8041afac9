import { clientCapabilityNeeds } from './methods.js';

/** Which client capability a server→client request needs. */
const NEEDS: Record<string, string> = clientCapabilityNeeds();

/**
 * What a set of declared client capabilities lacks for a server→client request (sampling, elicitation,
 * roots): the capability it needs, with the elicitation mode, as an MCP capabilities object
 * (`{ roots: {} }`, `{ elicitation: { url: {} } }`); undefined when declared. The same question whoever
 * declared them: a client to the gateway, or the gateway to an upstream connection.
 */
export function missingCapability(capabilities: Record<string, any>, method: string, params: Record<string, unknown> | undefined): Record<string, Record<string, unknown>> | undefined {
  const need = NEEDS[method];
  if (need === undefined) return undefined;
  const declared = capabilities[need];
  if (need !== 'elicitation') return declared ? undefined : { [need]: {} };
  // Each mode is declared on its own: URL mode as `url`; form mode (the default) as `form`, or by a bare
  // `elicitation: {}` from before modes existed. A client that lists only `url` cannot show a form.
  const mode = params?.mode === 'url' ? 'url' : 'form';
  const has = declared !== null && typeof declared === 'object' && (mode === 'url' ? declared.url !== undefined : declared.form !== undefined || declared.url === undefined);
  return has ? undefined : { elicitation: { [mode]: {} } };
}

/** A missing capability as a sentence names it: `the "roots" capability`, `URL-mode elicitation`. */
export function capabilityName(missing: Record<string, Record<string, unknown>>): string {
  const [name, modes] = Object.entries(missing)[0]!;
  if (name !== 'elicitation') return `the "${name}" capability`;
  return 'url' in modes ? 'URL-mode elicitation' : 'the "elicitation" capability (form mode)';
}
