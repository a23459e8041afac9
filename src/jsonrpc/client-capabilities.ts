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

/**
 * What a client's declared capabilities lack for a request put to it: missingCapability, and tool use in
 * sampling (`sampling.tools`) for a sampling request that offers tools, which a server must not send a
 * client that did not declare it. Not asked of what the gateway declared to an upstream (`sampling: {}`):
 * an upstream's tool-enabled sampling still reaches the clients that can answer it.
 */
export function missingClientCapability(capabilities: Record<string, any>, method: string, params: Record<string, unknown> | undefined): Record<string, Record<string, unknown>> | undefined {
  const missing = missingCapability(capabilities, method, params);
  if (missing || method !== 'sampling/createMessage' || !offersTools(params)) return missing;
  const sampling = capabilities.sampling;
  return sampling !== null && typeof sampling === 'object' && sampling.tools !== undefined && sampling.tools !== null ? undefined : { sampling: { tools: {} } };
}

function offersTools(params: Record<string, unknown> | undefined): boolean {
  return (Array.isArray(params?.tools) && params.tools.length > 0) || (params?.toolChoice !== undefined && params.toolChoice !== null);
}

/** A missing capability as a sentence names it: `the "roots" capability`, `URL-mode elicitation`. */
export function capabilityName(missing: Record<string, Record<string, unknown>>): string {
  const [name, modes] = Object.entries(missing)[0]!;
  if (name === 'sampling' && 'tools' in modes) return 'tool use in sampling (sampling.tools)';
  if (name !== 'elicitation') return `the "${name}" capability`;
  return 'url' in modes ? 'URL-mode elicitation' : 'the "elicitation" capability (form mode)';
}

/** The members of ClientCapabilities the schema defines: each is an object when present. */
const CAPABILITY_MEMBERS: readonly string[] = ['experimental', 'roots', 'sampling', 'elicitation', 'tasks', 'extensions'];

/**
 * Why declared client capabilities break the schema (not an object, or a member of it that is not one), or
 * undefined. Kept as they came, `"sampling": "x"` read as declared (the gateway put sampling to that client)
 * and, in a 2026-07-28 request, went on to the upstreams in `_meta`.
 */
export function capabilitiesProblem(caps: unknown): string | undefined {
  if (caps === null || typeof caps !== 'object' || Array.isArray(caps)) return 'must be an object';
  for (const k of CAPABILITY_MEMBERS) {
    const v = (caps as Record<string, unknown>)[k];
    if (v !== undefined && (v === null || typeof v !== 'object' || Array.isArray(v))) return `"${k}" must be an object`;
  }
  return undefined;
}
