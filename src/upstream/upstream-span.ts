import { GatewayError } from '../errors.js';
import type { Cancellation } from '../jsonrpc/cancellation.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import { GATEWAY_TRACE_CONTEXT } from './http-headers.js';
import { ATTR, mcpSpanName, requestAttributes, statusText } from '../observability/trace-attributes.js';
import type { UpstreamConfig } from '../config/schema.js';
import type { SpanFailure, TraceAttributes, Tracing } from '../observability/tracing.js';

type Params = Record<string, unknown> | undefined;
type Result = Record<string, unknown>;

/** What a failed upstream request records: the gateway's code (SWB_UPSTREAM_TIMEOUT, …) or the upstream's JSON-RPC code. */
function failureOf(err: unknown): SpanFailure {
  // Codes, never messages: an upstream's error text may echo the arguments it was given (see statusText).
  if (err instanceof GatewayError) return { type: err.code, message: err.code };
  if (err instanceof JsonRpcError) return { type: String(err.code), message: statusText(err.code) };
  return { type: '_OTHER', message: 'internal error' };
}

/**
 * One request to an upstream as a CLIENT span, child of the request being served: its context goes
 * to the upstream in params._meta (the MCP convention, on every transport; HTTP transports mirror it
 * into headers), so an upstream that traces itself joins the trace. Outside a traced request (health
 * checks, start-up) nothing is recorded. The caller's params are copied, never changed.
 */
export function tracedRequest(tracing: Tracing, method: string, params: Params, attributes: Readonly<TraceAttributes>, send: (params: Params) => Promise<Result>): Promise<Result> {
  const span = tracing.client(mcpSpanName(method, params), requestAttributes(method, params));
  if (!span) return send(params);
  // The instance's own attributes are set as they are (the caller keeps them for every request), not merged into a copy.
  span.set(attributes);
  const meta: Record<string | symbol, unknown> = { ...(params?._meta as Record<string, unknown> | undefined) };
  // The client's own trace fields go: the gateway's context replaces them whole. Injection writes only
  // the fields its context has, so a client's tracestate or baggage would otherwise go upstream beside
  // a traceparent of another trace (the client's one in _meta may have been invalid, or absent).
  delete meta.traceparent;
  delete meta.tracestate;
  delete meta.baggage;
  span.inject(meta);
  // What an HTTP transport may also send as headers: this context, not a client's (http-headers.ts).
  meta[GATEWAY_TRACE_CONTEXT] = true;
  return span.run(() => send({ ...params, _meta: meta })).then(
    (result) => {
      span.end(result.isError === true ? { type: 'tool_error' } : undefined);
      return result;
    },
    (err: unknown) => {
      if (err instanceof JsonRpcError) span.set({ [ATTR.rpcStatusCode]: String(err.code) });
      span.end(failureOf(err));
      throw err;
    },
  );
}

/**
 * A wait for one of an instance's concurrency slots (an INTERNAL span while a traced request waits in its
 * queue); throws when none came: the queue was full or the wait timed out (SWB_UPSTREAM_BUSY), or the
 * request was cancelled while it waited (it left the queue then, see Semaphore), as a cancelled call fails.
 */
export async function queueWait(tracing: Tracing, config: UpstreamConfig, slot: boolean | Promise<boolean>, signal: Cancellation | undefined): Promise<void> {
  const span = typeof slot === 'boolean' ? undefined : tracing.internal('upstream queue', { [ATTR.upstream]: config.name });
  if (await slot) return void span?.end();
  const upstream = config.name;
  const err = signal?.aborted
    ? new GatewayError('SWB_SESSION_CLOSED', 'request cancelled', { upstream })
    : new GatewayError('SWB_UPSTREAM_BUSY', `upstream "${upstream}" has ${config.concurrency.max} requests in flight and its queue is full; retry later`, { upstream });
  span?.end({ type: err.code, message: signal?.aborted ? 'cancelled while queued' : 'no slot within the queue timeout' });
  throw err;
}

/** The span attributes that name an instance: upstream, instance, transport, and a remote one's address. */
export function instanceAttributes(config: UpstreamConfig, id: string): TraceAttributes {
  const a: TraceAttributes = { [ATTR.upstream]: config.name, [ATTR.upstreamInstance]: id, [ATTR.upstreamTransport]: config.transport };
  if (config.transport === 'stdio') {
    a[ATTR.networkTransport] = 'pipe';
    return a;
  }
  const url = new URL(config.url);
  a[ATTR.networkTransport] = 'tcp';
  a[ATTR.networkProtocol] = 'http';
  a[ATTR.serverAddress] = url.hostname;
  a[ATTR.serverPort] = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  return a;
}
