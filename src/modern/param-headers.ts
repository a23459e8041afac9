import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import { decodeHeaderValue } from '../jsonrpc/header-value.js';

const HEADER_MISMATCH = -32020;

/** The `x-mcp-header` annotations of a tool's inputSchema: header name (lower case) → property path. */
function annotated(schema: unknown, path: string[] = [], out = new Map<string, string[]>()): Map<string, string[]> {
  const props = schema !== null && typeof schema === 'object' ? (schema as { properties?: unknown }).properties : undefined;
  if (props === null || typeof props !== 'object') return out;
  for (const [key, sub] of Object.entries(props as Record<string, unknown>)) {
    if (sub === null || typeof sub !== 'object') continue;
    const name = (sub as { 'x-mcp-header'?: unknown })['x-mcp-header'];
    // Only properties reachable through `properties` alone count (the spec's static reachability).
    if (typeof name === 'string' && name !== '') out.set(`mcp-param-${name.toLowerCase()}`, [...path, key]);
    annotated(sub, [...path, key], out);
  }
  return out;
}

function valueAt(args: unknown, path: string[]): unknown {
  let v = args;
  for (const k of path) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

/** A body value as its header carries it (integers compared as numbers, booleans in lower case). */
function matches(header: string, body: unknown): boolean {
  if (typeof body === 'number') return header.trim() !== '' && Number(header) === body;
  return header === String(body);
}

/**
 * The check of a 2026-07-28 tools/call's `Mcp-Param-*` headers against the tool's definition: every
 * annotated argument present in the body must come with its header, equal after decoding; a header
 * for an argument that is absent is ignored, like any header the tool does not annotate.
 */
export function paramHeaderCheck(headers: Readonly<Record<string, string>>, args: unknown): (definition: Record<string, unknown>) => void {
  return (definition) => {
    for (const [header, path] of annotated(definition.inputSchema)) {
      const body = valueAt(args, path);
      const raw = headers[header];
      if (body === undefined || body === null) continue;
      if (raw === undefined) throw new JsonRpcError(HEADER_MISMATCH, `Header mismatch: the ${header} header is required (argument ${path.join('.')} is in the body)`);
      const value = decodeHeaderValue(raw);
      if (value === undefined) throw new JsonRpcError(HEADER_MISMATCH, `Header mismatch: the ${header} header is malformed`);
      if (!matches(value, body)) throw new JsonRpcError(HEADER_MISMATCH, `Header mismatch: ${header} header value does not match argument ${path.join('.')}`);
    }
  };
}
