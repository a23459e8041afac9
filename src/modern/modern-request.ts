import type { IncomingHttpHeaders } from 'node:http';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import { existsIn, isClientRequest, methodSpec, type MethodSpec } from '../jsonrpc/methods.js';
import { MODERN_PROTOCOL_VERSIONS } from '../jsonrpc/protocol-revisions.js';
import { isJsonObject, isRequest, type JsonRpcMessage, type RequestId } from '../jsonrpc/types.js';
import { decodeHeaderValue } from '../jsonrpc/header-value.js';
import { ModernError } from './modern-error.js';
import { capabilitiesProblem } from '../jsonrpc/client-capabilities.js';
import { isProgressToken } from '../jsonrpc/progress-token.js';

import { LOG_LEVELS, META_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_VERSION, metaOf } from '../jsonrpc/modern-meta.js';

/** The newest legacy revision: a header above it (or modern _meta in the body) makes a request modern. */
const NEWEST_LEGACY = '2025-11-25';

/** One validated 2026-07-28 request: what its `_meta` declared, read once. */
export interface ModernCall {
  readonly id: RequestId;
  readonly method: string;
  readonly params: Record<string, unknown>;
  readonly spec: MethodSpec;
  readonly version: string;
  /** Declared for this request only: never inferred from earlier ones. */
  readonly capabilities: Record<string, any>;
  readonly clientInfo: Record<string, unknown> | undefined;
  /** Absent: no notifications/message for this request. */
  readonly logLevel: string | undefined;
  /**
   * Where the request's Mcp-Param-* headers are read (names in lower case), against the tool's
   * definition: the request's own headers, looked up by the names the definition annotates.
   */
  readonly paramHeaders: Readonly<Record<string, string | string[] | undefined>>;
}


function headerOf(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * The era of one POSTed message. Modern: the body's `_meta` names a protocol version, or the
 * MCP-Protocol-Version header is newer than every legacy revision. initialize is legacy unless its
 * `_meta` says otherwise.
 */
export function isModernMessage(headers: IncomingHttpHeaders, m: JsonRpcMessage): boolean {
  if (metaOf((m as { params?: unknown }).params)?.[META_VERSION] !== undefined) return true;
  // initialize opens a legacy session, whatever the header says; with modern _meta it is a removed method (404).
  if (isRequest(m) && m.method === 'initialize') return false;
  return newerThanLegacy(headerOf(headers, 'mcp-protocol-version'));
}

/** Whether a GET or DELETE says it is modern (then 405: the era has neither). */
export function isModernHeader(headers: IncomingHttpHeaders): boolean {
  return newerThanLegacy(headerOf(headers, 'mcp-protocol-version'));
}

/**
 * A revision (a date) after every legacy one. Compared as text alone, "garbage" or "v2" came after
 * 2025-11-25 and was served as a 2026-07-28 request (a header required, -32020) rather than refused as
 * the unsupported version it is (400, -32600). The common case, a legacy date, is decided by the comparison.
 */
function newerThanLegacy(v: string | undefined): boolean {
  return v !== undefined && v > NEWEST_LEGACY && /^\d{4}-\d{2}-\d{2}$/.test(v);
}

const NO_PARAM_HEADERS: Readonly<Record<string, string | string[] | undefined>> = Object.freeze({});

/**
 * A header that must mirror a body value (names case-insensitively, values exactly). Only Mcp-Name (and
 * Mcp-Param-*) may use the `=?base64?…?=` form, decoded before the comparison; Mcp-Method is compared as
 * sent, as an intermediary that routes or filters on it reads it (a sentinel there would pass a rule on
 * `tools/call` and still be served as one).
 */
function mirrored(headers: IncomingHttpHeaders, name: string, body: string, id: RequestId, display: string, sentinel: boolean): void {
  const raw = headerOf(headers, name);
  if (raw === undefined) throw new ModernError(400, ErrorCode.HeaderMismatch, `Header mismatch: the ${display} header is required`, id);
  const value = sentinel ? decodeHeaderValue(raw) : raw;
  if (value === undefined) throw new ModernError(400, ErrorCode.HeaderMismatch, `Header mismatch: the ${display} header is malformed`, id);
  if (value !== body) throw new ModernError(400, ErrorCode.HeaderMismatch, `Header mismatch: ${display} header value does not match the request body`, id);
}

const LISTEN_FLAGS = ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged'] as const;

/**
 * A listen's filter as the schema types it: required (without it a stream was acknowledged with nothing
 * honoured, one that never carried a notification), three booleans, a list of URI strings. A flag was read
 * as truthy (`"false"` honoured and acknowledged as true: the notifications the client declined, sent), and
 * one URI not in a list was acknowledged without it, never delivered.
 */
function listenFilterCheck(filter: unknown, id: RequestId): void {
  const refuse = (why: string) => new ModernError(400, ErrorCode.InvalidParams, `Invalid params: subscriptions/listen ${why}`, id);
  if (!isJsonObject(filter)) throw refuse('needs params.notifications, an object naming the notifications to receive');
  for (const flag of LISTEN_FLAGS) if (filter[flag] !== undefined && typeof filter[flag] !== 'boolean') throw refuse(`params.notifications.${flag} must be a boolean`);
  const uris = filter.resourceSubscriptions;
  if (uris !== undefined && !(Array.isArray(uris) && uris.every((u) => typeof u === 'string'))) throw refuse('params.notifications.resourceSubscriptions must be a list of URI strings');
}

/**
 * A retry's own fields as the schema types them: `requestState` a string, `inputResponses` an object. A
 * state of another type was read as no state, so the request was served as a new call (the tool run again
 * upstream, its first run's effects done twice) and answered as if the retry had continued the call;
 * answers of another type were read as none.
 */
function roundFieldsCheck(params: Record<string, unknown>, id: RequestId): void {
  if ('requestState' in params && typeof params.requestState !== 'string') {
    throw new ModernError(400, ErrorCode.InvalidParams, 'Invalid params: requestState must be the string the server sent, echoed unchanged', id);
  }
  if ('inputResponses' in params && !isJsonObject(params.inputResponses)) {
    throw new ModernError(400, ErrorCode.InvalidParams, 'Invalid params: inputResponses must be an object of answers by input request key', id);
  }
}

/**
 * Validates a modern request in this order: MCP-Protocol-Version present and the body's (-32020), the
 * version (-32022), the other mirrored headers (-32020), the required `_meta` fields (-32602), the method
 * (-32601, HTTP 404). Client capabilities are checked later, when something needs one (-32021). Throws a
 * ModernError that carries the request id.
 */
export function readModernRequest(headers: IncomingHttpHeaders, m: JsonRpcMessage & { id: RequestId; method: string }): ModernCall {
  const { id, method } = m;
  const params = ((m as { params?: unknown }).params ?? {}) as Record<string, unknown>;
  const meta = metaOf((m as { params?: unknown }).params);
  const bodyVersion = meta?.[META_VERSION];
  const headerVersion = headerOf(headers, 'mcp-protocol-version');
  if (headerVersion === undefined) throw new ModernError(400, ErrorCode.HeaderMismatch, 'Header mismatch: the MCP-Protocol-Version header is required', id);
  if (typeof bodyVersion === 'string' && headerVersion !== bodyVersion) {
    throw new ModernError(400, ErrorCode.HeaderMismatch, `Header mismatch: MCP-Protocol-Version header value '${headerVersion}' does not match _meta protocolVersion '${bodyVersion}'`, id);
  }
  // Before 2026-07-28's own rules (its other headers and _meta fields), which a version not served need not
  // follow: its client needs the versions served, not -32020 or -32602 (before 2026-12-07 it got those).
  if (typeof bodyVersion === 'string' && !(MODERN_PROTOCOL_VERSIONS as readonly string[]).includes(bodyVersion)) {
    throw new ModernError(400, ErrorCode.UnsupportedProtocolVersion, `Unsupported protocol version: ${bodyVersion}`, id, { supported: [...MODERN_PROTOCOL_VERSIONS], requested: bodyVersion });
  }
  mirrored(headers, 'mcp-method', method, id, 'Mcp-Method', false);
  const spec = methodSpec(method);
  const target = spec?.route === 'name' ? params.name : spec?.route === 'uri' ? params.uri : undefined;
  if (spec?.mrtr && typeof target === 'string') mirrored(headers, 'mcp-name', target, id, 'Mcp-Name', true);
  if (typeof bodyVersion !== 'string') throw new ModernError(400, ErrorCode.InvalidParams, `Invalid params: _meta["${META_VERSION}"] is required`, id);
  const capabilities = meta![META_CAPABILITIES];
  if (capabilities === null || typeof capabilities !== 'object' || Array.isArray(capabilities)) {
    throw new ModernError(400, ErrorCode.InvalidParams, `Invalid params: _meta["${META_CAPABILITIES}"] is required (an empty object declares none)`, id);
  }
  const capsProblem = capabilitiesProblem(capabilities);
  if (capsProblem) throw new ModernError(400, ErrorCode.InvalidParams, `Invalid params: _meta["${META_CAPABILITIES}"]: ${capsProblem}`, id);
  if (!isClientRequest(spec) || !existsIn(spec, '2026-07-28')) throw new ModernError(404, ErrorCode.MethodNotFound, `Method not found: ${method}`, id);
  if (method === 'subscriptions/listen') listenFilterCheck(params.notifications, id);
  if (spec!.mrtr) roundFieldsCheck(params, id);
  const info = meta![META_CLIENT_INFO];
  const level = meta![META_LOG_LEVEL];
  // Not a level ("warn", a number): refused, as the spec's logging page says, rather than read as "every
  // message" (an unknown level ranked below debug) or as none.
  if (level !== undefined && !LOG_LEVELS.includes(level as string)) {
    throw new ModernError(400, ErrorCode.InvalidParams, `Invalid params: _meta["${META_LOG_LEVEL}"] must be one of ${LOG_LEVELS.join(', ')}`, id);
  }
  // Not a string or integer: refused here (HTTP 400, as for the other _meta fields), not echoed on progress.
  if ('progressToken' in meta! && !isProgressToken(meta!.progressToken)) {
    throw new ModernError(400, ErrorCode.InvalidParams, 'Invalid params: _meta.progressToken must be a string or an integer', id);
  }
  return {
    id,
    method,
    params,
    spec,
    version: bodyVersion,
    capabilities: capabilities as Record<string, any>,
    clientInfo: info !== null && typeof info === 'object' ? (info as Record<string, unknown>) : undefined,
    logLevel: level as string | undefined,
    // Only a tools/call can carry Mcp-Param-* headers worth reading. Not copied out: the check looks up
    // just the names the tool's definition annotates (most annotate none), so no walk over every header.
    paramHeaders: method === 'tools/call' ? headers : NO_PARAM_HEADERS,
  };
}
