import type { Principal } from '../auth/principal.js';
import type { EdgeRequest } from './edge-exchange.js';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import { targetOf } from '../jsonrpc/methods.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import { isJsonObject, isRequest, type JsonRpcMessage, type RequestId } from '../jsonrpc/types.js';
import type { Tracing } from '../observability/tracing.js';
import type { ClientSession } from '../session/index.js';
import { insufficientScope, owedRate, type EdgeAuth } from './authorize-request.js';
import type { EdgeContext } from './edge-context.js';
import { auditRateRefused, type CallAs } from '../policy/rate-audit.js';
import type { EndpointRouter } from '../router/index.js';
import { CALL_TOOL } from '../router/meta-tools.js';
import { isJsonContentType } from './content-type.js';
import { readMessages, type ReadMessages } from './read-messages.js';
import { auditsRefusal } from './refusal-audit.js';
import type { Refusal } from './replies.js';

/**
 * Message acceptance, shared by Streamable HTTP and the legacy HTTP+SSE message path: what a POST
 * must be before its messages reach a session. First the body (media type, JSON, JSON-RPC, nesting
 * depth), then the session's rules (batches only on 2025-03-26; every request's scopes).
 */
export function readClientMessages(req: EdgeRequest, limits: Pick<EdgeContext, 'maxJsonDepth' | 'maxBatchMessages'>): ReadMessages | Refusal {
  const transfer = req.headers['transfer-encoding'];
  if (transfer !== undefined) {
    const unknown = unknownTransferCoding(transfer);
    if (unknown !== undefined) {
      // Node takes off the chunking alone: under `gzip, chunked` the body came still gzipped, and was
      // answered as malformed JSON quoting its bytes. RFC 9112 §6.1: a coding not understood is 501.
      const message = `Not Implemented: Transfer-Encoding ${unknown.slice(0, 32)} is not supported; send the body chunked or with a Content-Length`;
      return { status: 501, message, code: ErrorCode.ServerError, headers: {} };
    }
  }
  const coding = req.headers['content-encoding'];
  if (coding !== undefined && coding.trim().toLowerCase() !== 'identity') {
    // Bodies are read as they come, never decoded (no gzip bomb to inflate): a compressed body would be
    // answered as malformed JSON quoting its bytes, telling its client nothing of what to change.
    const message = `Unsupported Media Type: Content-Encoding ${coding.slice(0, 32)} is not supported; send the body uncompressed`;
    return { status: 415, message, code: ErrorCode.ServerError, headers: { 'accept-encoding': 'identity' } };
  }
  const ct = req.headers['content-type'];
  if (!isJsonContentType(ct)) {
    return { status: 415, message: 'Unsupported Media Type: Content-Type must be application/json (UTF-8)', code: ErrorCode.ServerError, headers: {} };
  }
  try {
    return readMessages(req.body, limits.maxJsonDepth, limits.maxBatchMessages);
  } catch (err) {
    if (!(err instanceof JsonRpcError)) throw err;
    return { status: 400, message: err.message, code: err.code, headers: {}, id: (err.data as { id?: RequestId } | undefined)?.id ?? null };
  }
}

/** The first transfer coding of the header other than `chunked` (and the no-op `identity`), if any. */
function unknownTransferCoding(header: string): string | undefined {
  for (const part of header.split(',')) {
    const coding = part.trim().toLowerCase();
    if (coding !== 'chunked' && coding !== 'identity' && coding !== '') return coding;
  }
  return undefined;
}

/**
 * The tenant's rate for a POST's messages, once its body is read and before anything acts on them: a
 * token per JSON-RPC request (a 2025-03-26 batch of N takes N, all or none, so a batch is no way around
 * requestsPerSecond). A client's answer to a question put to it (elicitation, sampling, roots, a
 * confirmation) and its notifications take none: refused, the answer would be lost and the call that
 * asked would wait for it until it failed. A request another replica forwarded was counted there, by
 * the edge the client sent it to (see EdgeRequest.rateOwed).
 */
export function chargeRate(ctx: EdgeContext, router: EndpointRouter, req: EdgeRequest, messages: readonly JsonRpcMessage[]): Refusal | undefined | Promise<Refusal | undefined> {
  if (!req.rateOwed) return undefined;
  const { auth, cluster } = ctx;
  let requests = 0;
  let first: RequestId | null = null;
  for (const m of messages) {
    if (!isRequest(m)) continue;
    if (requests++ === 0) first = m.id;
  }
  if (requests === 0 || cluster?.forwarded(req)) return undefined;
  const refused = owedRate(auth, req.principal!, requests);
  // No closure for a POST the rate lets through synchronously (every one, with the memory store).
  if (refused instanceof Promise) return refused.then((r) => r && rateRefusal(r, ctx, router, req, messages, first));
  return refused && rateRefusal(refused, ctx, router, req, messages, first);
}

/**
 * A POST refused for the request rate: its audited calls get their denial lines (the audit covers a refused
 * call, whatever refused it); a 2026-07-28 retry answering a round of a call is none (auditsRefusal). The
 * refusal waits for its lines only when one of them had to ask the shared store.
 */
function rateRefusal(r: Refusal, ctx: EdgeContext, router: EndpointRouter, req: EdgeRequest, messages: readonly JsonRpcMessage[], id: RequestId | null): Refusal | Promise<Refusal> {
  const { audit } = ctx;
  const refusal = { ...r, id };
  if (!audit) return refusal;
  const path = router.config.path;
  const audits = messages.map((m) => auditsRefusal(ctx.modern, req, path, m));
  const write = (verdicts: readonly boolean[]): Refusal => {
    auditRateRefused(audit, path, req.principal!, messages.filter((_, i) => verdicts[i]), calledAs(router, req.principal!.tenant));
    return refusal;
  };
  return audits.some((a) => a instanceof Promise) ? Promise.all(audits).then(write) : write(audits as boolean[]);
}

/**
 * A refused tools/call as the audit names every call (the tools stage, which it never reached, would have
 * rewritten it so): on a search-mode endpoint a call_tool as the call it wraps, a renamed tool by its
 * canonical name. A shortened name stays as sent: only the catalogue knows what it stands for.
 */
function calledAs(router: EndpointRouter, tenant: string): CallAs {
  return (params) => {
    let p = params;
    const wrapped = p?.arguments;
    if (router.tools.searchMode && p?.name === CALL_TOOL && isJsonObject(wrapped) && typeof wrapped.name === 'string') p = { ...p, name: wrapped.name, arguments: wrapped.arguments ?? {} };
    const canonical = typeof p?.name === 'string' ? router.tools.curationFor(tenant).canonicalOf(p.name) : undefined;
    return canonical === undefined ? p : { ...p, name: canonical };
  };
}

/** The session's rules for a POST's messages; a refused scope is also recorded by the session's guard. */
export function admitToSession(auth: EdgeAuth, req: EdgeRequest, path: string, session: ClientSession, read: ReadMessages): Refusal | undefined {
  if (read.batch && session.protocolVersion !== '2025-03-26') {
    const version = session.protocolVersion ?? '(not initialized)';
    const first = read.messages.find(isRequest);
    return { status: 400, message: `Invalid Request: batches are not supported on protocol version ${version}`, code: ErrorCode.InvalidRequest, headers: {}, id: first?.id ?? null };
  }
  for (const m of read.messages) {
    if (!isRequest(m)) continue;
    const missing = session.guard.missingScopes(m.method, judgedParams(session, m.method, m.params));
    if (missing) {
      auditScopeRefused(session, read.messages, missing);
      return { ...insufficientScope(auth, req, path, missing, session.endpoint.config.path), id: m.id };
    }
  }
  return undefined;
}

/** A request as the policy stage will judge it: a call by the tool it runs (call_tool's, a rename's). */
function judgedParams(session: ClientSession, method: string, params: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  return method === 'tools/call' && session.guard.tenant.hasScopedRules ? session.endpoint.tools.judged(session.guard.tenant.name, params) : params;
}

/**
 * A POST refused 403 for a scope is refused whole: each audited request of it gets its denial line, as each
 * of a batch the rate refuses does (before 2026-12-07 only the first lacking a scope had one: the rest of a
 * 2025-03-26 batch, scoped calls included, left no trace). Its rule names the scopes it lacks itself, else
 * the ones its batch was refused for.
 */
function auditScopeRefused(session: ClientSession, messages: readonly JsonRpcMessage[], refusedFor: readonly string[]): void {
  const guard = session.guard;
  for (const m of messages) {
    if (!isRequest(m) || !guard.audits(m.method)) continue;
    const params = m.method === 'tools/call' ? session.endpoint.tools.judged(guard.tenant.name, m.params) : m.params;
    if (!targetOf(m.method, params)) continue;
    const missing = guard.missingScopes(m.method, params) ?? refusedFor;
    guard.refused(m.method, params, `missing scope ${missing.join(' ')}`);
  }
}

/**
 * Hands a POST's messages to their session. With tracing on, inside the trace context of the POST's
 * own traceparent/tracestate/baggage headers: each request's span takes it as parent (or links it,
 * when the request carries its own context in params._meta).
 */
export function deliverMessages(tracing: Tracing | undefined, req: EdgeRequest, session: ClientSession, messages: readonly JsonRpcMessage[]): void {
  // Each request is judged by this POST's token (the session's latest may be another client's by then).
  const principal = req.principal ?? session.principal;
  if (tracing?.enabled) return tracing.withHeaders(req.headers, () => deliver(session, messages, principal));
  deliver(session, messages, principal);
}

function deliver(session: ClientSession, messages: readonly JsonRpcMessage[], principal: Principal): void {
  for (const m of messages) session.handle(m, principal);
}
