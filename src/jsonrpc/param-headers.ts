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

const PATHS = new WeakMap<object, Map<string, string[]>>();

/** paramHeaderPaths, computed once per schema object (a tool's definition is the same object call after call). */
export function cachedParamHeaderPaths(schema: unknown): Map<string, string[]> {
  if (schema === null || typeof schema !== 'object') return new Map();
  let paths = PATHS.get(schema);
  if (!paths) PATHS.set(schema, (paths = paramHeaderPaths(schema)));
  return paths;
}

/** The argument at a property path (undefined when absent). */
export function valueAt(args: unknown, path: readonly string[]): unknown {
  let v = args;
  for (const k of path) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

/** The Mcp-Param-* headers a tools/call must carry for these arguments (what the gateway sends a modern upstream). */
export function paramHeaders(inputSchema: unknown, args: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [header, path] of cachedParamHeaderPaths(inputSchema)) {
    const v = valueAt(args, path);
    if (v !== undefined && v !== null) out[header] = encodeHeaderValue(String(v));
  }
  return out;
}
