import { GatewayError, isGatewayErrorCode } from '../../errors.js';
import type { JsonRpcResponse } from '../../jsonrpc/types.js';
import { ATTR, mcpSpanName, requestAttributes, requestIdAttribute, statusText } from '../../observability/trace-attributes.js';
import type { TraceAttributes, TraceSpan, Tracing } from '../../observability/tracing.js';
import type { Next, RequestContext, Stage } from '../request-pipeline.js';

/**
 * The request's SERVER span (MCP semantic conventions: "tools/call get-sum", mcp.method.name,
 * gen_ai.tool.name, …), around every other stage so that upstream calls and log lines inside are its
 * children. With tracing off: one property check, nothing allocated. Arguments and results are never
 * recorded; tenant and subject only with tracing.recordPrincipal.
 */
export const traceStage: Stage = (ctx, next) => {
  const tracing = ctx.host.endpoint.tracing;
  if (!tracing.enabled) return next(ctx);
  return traced(ctx, next, tracing);
};

function traced(ctx: RequestContext, next: Next, tracing: Tracing): Promise<JsonRpcResponse | undefined> {
  const { req } = ctx;
  const span = tracing.server(mcpSpanName(req.method, req.params), req.params?._meta, serverAttributes(ctx, tracing.recordPrincipal));
  ctx.span = span;
  const spans = ctx.host.spans;
  // This stage runs before the lifecycle's check of ids in flight: a request reusing the id of one (refused
  // there) took the original's place here and, once refused, removed it, and what the gateway then asked
  // the client for the original had no parent (before 2026-12-08). Only the request that registered its id removes it.
  const own = spans !== undefined && !spans.has(req.id);
  if (own) spans.set(req.id, span);
  return span.run(() => next(ctx)).then(
    (answer) => {
      if (own) spans.delete(req.id);
      finish(span, ctx, answer);
      return answer;
    },
    (err: unknown) => {
      if (own) spans.delete(req.id);
      span.end({ type: '_OTHER', message: err instanceof GatewayError ? err.code : 'internal error' });
      throw err;
    },
  );
}

function serverAttributes(ctx: RequestContext, recordPrincipal: boolean): TraceAttributes {
  const { req, host } = ctx;
  const a: TraceAttributes = requestAttributes(req.method, req.params);
  a[ATTR.jsonrpcRequestId] = requestIdAttribute(ctx.clientId ?? req.id);
  a[ATTR.mcpSession] = host.session?.id;
  a[ATTR.mcpProtocolVersion] = host.era === 'modern' ? '2026-07-28' : host.session?.protocolVersion;
  a[ATTR.networkTransport] = 'tcp';
  a[ATTR.networkProtocol] = 'http';
  a[ATTR.endpoint] = host.endpoint.config.path;
  a[ATTR.era] = host.era;
  if (recordPrincipal) {
    a[ATTR.tenant] = host.guard.tenant.name;
    a[ATTR.userId] = host.guard.principal.subject;
  }
  return a;
}

/** The outcome as the conventions record it: error.type is the JSON-RPC code, or tool_error, or cancelled. */
function finish(span: TraceSpan, ctx: RequestContext, answer: JsonRpcResponse | undefined): void {
  const decision = ctx.decision;
  if (decision && !decision.allowed) span.event('policy.denied', { reason: decision.reason ?? 'not_allowed', kind: decision.kind });
  const response = answer ?? ctx.response;
  if (answer === undefined && ctx.cancel?.aborted) return span.end({ type: 'cancelled', message: 'cancelled by the client' });
  if (response && 'error' in response) {
    const { code, data } = response.error;
    // The gateway's own codes only: an upstream's error passes through with its data, whose code (any
    // string, of any size) would otherwise be the span's status message, which no attribute limit cuts.
    const raw = (data as { code?: unknown } | undefined)?.code;
    const gatewayCode = isGatewayErrorCode(raw) ? raw : undefined;
    span.set({ [ATTR.rpcStatusCode]: String(code), [ATTR.errorCode]: gatewayCode });
    // The code, not the message: messages quote arguments and name tenants (see statusText).
    return span.end({ type: String(code), message: statusText(code, gatewayCode) });
  }
  if (response && response.result.isError === true) return span.end({ type: 'tool_error' });
  span.end();
}
