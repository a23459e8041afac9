import { encodeHeaderValue } from '../jsonrpc/header-value.js';
import { paramHeaders } from '../jsonrpc/param-headers.js';
import type { JsonRpcMessage } from '../jsonrpc/types.js';
import type { BearerSource } from './bearer-source.js';

/**
 * Headers for every request to a remote upstream: the configured static ones and the gateway's own
 * token. Nothing from the client's request is ever copied here.
 */
export async function upstreamHeaders(
  base: Record<string, string>,
  credentials: BearerSource | undefined,
  extra: Record<string, string>,
): Promise<Record<string, string>> {
  const headers: Record<string, string> = { ...base, ...extra };
  if (!credentials) return headers;
  // A static Authorization in `headers`, in whatever case it was written, would go out too (undici sends
  // both), first: a server reading the first took every user's call for that one shared identity.
  for (const name of Object.keys(headers)) if (name.toLowerCase() === 'authorization') delete headers[name];
  headers.authorization = `Bearer ${await credentials.token()}`;
  return headers;
}

/** The token a request made with upstreamHeaders carried: what a 401 to it refused. */
export function sentBearer(headers: Record<string, string>): string {
  return (headers.authorization ?? '').replace(/^Bearer /, '');
}

export function headerValue(h: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;
const VISIBLE = /^[\x20-\x7e]{1,8192}$/;

/**
 * Marks a params._meta whose trace fields the gateway wrote (upstream-span.ts). A symbol: it goes with
 * the object's copies (spreads) and never onto the wire. Without it the fields are the client's own, which
 * pass upstream in _meta as any other _meta field does, but are no headers of the gateway's request.
 */
export const GATEWAY_TRACE_CONTEXT: unique symbol = Symbol('switchboard.gatewayTraceContext');

/**
 * The trace context the gateway put in a request's params._meta, mirrored into W3C headers for a remote
 * upstream whose HTTP layer traces. Only the gateway's (see GATEWAY_TRACE_CONTEXT), and well-formed
 * values only: a value that would break a header is left out, never sent.
 */
export function traceHeaders(message: unknown): Record<string, string> | undefined {
  const meta = (message as { params?: { _meta?: Record<string | symbol, unknown> } }).params?._meta;
  if (meta?.[GATEWAY_TRACE_CONTEXT] !== true) return undefined;
  const parent = meta.traceparent;
  if (typeof parent !== 'string' || !TRACEPARENT.test(parent)) return undefined;
  const h: Record<string, string> = { traceparent: parent };
  if (typeof meta!.tracestate === 'string' && VISIBLE.test(meta!.tracestate)) h.tracestate = meta!.tracestate;
  if (typeof meta!.baggage === 'string' && VISIBLE.test(meta!.baggage)) h.baggage = meta!.baggage;
  return h;
}

/**
 * The headers a 2026-07-28 request mirrors from its body: its version, Mcp-Method, Mcp-Name (the name
 * the upstream itself uses), the trace context, and the tool's x-mcp-header arguments as the upstream's
 * own definition of the tool (`tool`) says.
 */
export function modernHeaders(message: JsonRpcMessage, version: string, tool: ((name: string) => Readonly<Record<string, unknown>> | undefined) | undefined): Record<string, string> {
  const h: Record<string, string> = { 'mcp-protocol-version': version, ...traceHeaders(message) };
  const method = (message as { method?: unknown }).method;
  if (typeof method === 'string') h['mcp-method'] = method;
  const params = (message as { params?: Record<string, unknown> }).params;
  const name = method === 'resources/read' ? params?.uri : method === 'tools/call' || method === 'prompts/get' ? params?.name : undefined;
  if (typeof name === 'string') h['mcp-name'] = encodeHeaderValue(name);
  const definition = method === 'tools/call' && typeof name === 'string' ? tool?.(name) : undefined;
  if (definition) Object.assign(h, paramHeaders(definition.inputSchema, params?.arguments));
  return h;
}
