import { encodeHeaderValue } from './header-value.js';

/**
 * The `x-mcp-header` annotations of a tool's inputSchema (2026-07-28): header name in lower case
 * (`mcp-param-<name>`) → the property path it mirrors. Only properties reachable from the root through
 * `properties` alone count (the spec's static reachability).
 */
export function paramHeaderPaths(schema: unknown, path: string[] = [], out = new Map<string, string[]>()): Map<string, string[]> {
  const props = schema !== null && typeof schema === 'object' ? (schema as { properties?: unknown }).properties : undefined;
  if (props === null || typeof props !== 'object') return out;
  for (const [key, sub] of Object.entries(props as Record<string, unknown>)) {
    if (sub === null || typeof sub !== 'object') continue;
    const name = (sub as { 'x-mcp-header'?: unknown })['x-mcp-header'];
    if (typeof name === 'string' && name !== '') out.set(`mcp-param-${name.toLowerCase()}`, [...path, key]);
    paramHeaderPaths(sub, [...path, key], out);
  }
  return out;
}

/** RFC 9110 field-name token: 1*tchar. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const COMPOSITION = ['items', 'prefixItems', 'additionalProperties', 'patternProperties', 'oneOf', 'anyOf', 'allOf', 'not', 'if', 'then', 'else', '$ref', '$defs', 'definitions', 'dependentSchemas', 'contains'];

/**
 * Why a tool's `x-mcp-header` annotations break the 2026-07-28 rules, or undefined when they do not:
 * a name that is not an HTTP token (control characters, CR/LF, spaces), two names alike but for case, a
 * property that is not an integer, string or boolean (a number is not allowed), or an annotation that
 * is not reached from the root through `properties` alone (inside items, a composition, a $ref). A
 * client on Streamable HTTP must leave such a tool out of its tools/list.
 */
export function invalidParamHeaders(schema: unknown): string | undefined {
  if (schema !== null && typeof schema === 'object' && 'x-mcp-header' in schema) return 'the schema root itself carries an x-mcp-header';
  return reachable(schema, '', new Set()) ?? unreachable(schema, false);
}

function reachable(schema: unknown, at: string, seen: Set<string>): string | undefined {
  const props = schema !== null && typeof schema === 'object' ? (schema as { properties?: unknown }).properties : undefined;
  if (props === null || typeof props !== 'object') return undefined;
  for (const [key, sub] of Object.entries(props as Record<string, unknown>)) {
    if (sub === null || typeof sub !== 'object') continue;
    const path = at === '' ? key : `${at}.${key}`;
    const name = (sub as { 'x-mcp-header'?: unknown })['x-mcp-header'];
    if (name !== undefined) {
      if (typeof name !== 'string' || !TOKEN.test(name)) return `x-mcp-header of "${path}" is not an HTTP field-name token`;
      if (seen.has(name.toLowerCase())) return `x-mcp-header "${name}" is used twice (names compare without case)`;
      seen.add(name.toLowerCase());
      const type = (sub as { type?: unknown }).type;
      if (type !== 'string' && type !== 'integer' && type !== 'boolean') return `x-mcp-header "${name}" is on "${path}", whose type is ${JSON.stringify(type ?? null)}, not integer, string or boolean`;
    }
    const deeper = reachable(sub, path, seen);
    if (deeper) return deeper;
  }
  return undefined;
}

/** An annotation anywhere but on a properties chain from the root (`under` once the walk has left that chain). */
function unreachable(schema: unknown, under: boolean): string | undefined {
  if (schema === null || typeof schema !== 'object') return undefined;
  if (Array.isArray(schema)) {
    for (const item of schema) if (unreachable(item, true)) return unreachable(item, true);
    return undefined;
  }
  const o = schema as Record<string, unknown>;
  if (under && 'x-mcp-header' in o) return 'an x-mcp-header is not reached from the schema root through properties alone';
  for (const [k, v] of Object.entries(o)) {
    if (k === 'properties' && v !== null && typeof v === 'object' && !Array.isArray(v)) {
      for (const sub of Object.values(v as Record<string, unknown>)) {
        const why = unreachable(sub, under);
        if (why) return why;
      }
    } else if (COMPOSITION.includes(k) || (under && v !== null && typeof v === 'object')) {
      const why = unreachable(v, true);
      if (why) return why;
    }
  }
  return undefined;
}

const PATHS = new WeakMap<object, Map<string, string[]>>();

/** paramHeaderPaths, computed once per schema object (a tool's definition is the same object call after call). */
export function cachedParamHeaderPaths(schema: unknown): Map<string, string[]> {
  if (schema === null || typeof schema !== 'object') return new Map();
  let paths = PATHS.get(schema);
  if (!paths) PATHS.set(schema, (paths = paramHeaderPaths(schema)));
  return paths;
}

/**
 * The argument at a property path (undefined when absent). Own properties only: an absent `constructor`
 * or `toString` read as the inherited function, which the gateway then required a header for from a
 * client that sent none, and sent the upstream as `Mcp-Param-…: function Object() { [native code] }`.
 */
export function valueAt(args: unknown, path: readonly string[]): unknown {
  let v = args;
  for (const k of path) v = v !== null && typeof v === 'object' && Object.hasOwn(v, k) ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

/** The Mcp-Param-* headers a tools/call must carry for these arguments (what the gateway sends a modern upstream). */
export function paramHeaders(inputSchema: unknown, args: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [header, path] of cachedParamHeaderPaths(inputSchema)) {
    const v = valueAt(args, path);
    // Primitives only (an annotation is on an integer, string or boolean): String() of an object the client
    // wrote, `{"toString": 1}`, threw, and the call failed as "could not be reached", counted by the circuit.
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[header] = encodeHeaderValue(String(v));
  }
  return out;
}
