import { ErrorCode } from '../jsonrpc/error-codes.js';
import type { JsonRpcResponse } from '../jsonrpc/types.js';
import type { ModernCall } from './modern-request.js';

import { META_CAPABILITIES, META_SERVER_INFO } from '../jsonrpc/modern-meta.js';

export interface ShapeOptions {
  serverInfo: Record<string, unknown>;
  ttlMs: number;
  cacheScope: 'public' | 'private';
}

/**
 * A 2025 upstream's answer as a 2026-07-28 client must see it: every result says its resultType (an
 * upstream that omits it meant "complete") and who served it; the six cacheable results say for how
 * long and for whom they may be cached (never a retry's: it carried answers meant for one round).
 * Resource-not-found (-32002) is -32602 in this era.
 */
export function shapeModernResponse(call: ModernCall, response: JsonRpcResponse, retried: boolean, o: ShapeOptions): JsonRpcResponse {
  if ('error' in response) {
    if (response.error.code !== ErrorCode.ResourceNotFound) return response;
    // Resource not found is -32602 in this era, with the URI in data.
    const data = response.error.data !== null && typeof response.error.data === 'object' ? response.error.data : {};
    const uri = call.params.uri;
    return { ...response, error: { ...response.error, code: ErrorCode.InvalidParams, data: typeof uri === 'string' ? { ...data, uri } : data } };
  }
  // Shaped in place: the result was parsed for this answer alone (the audit has already seen it).
  const result = response.result as Record<string, unknown>;
  result.resultType ??= 'complete';
  const meta = result._meta;
  if (meta !== null && typeof meta === 'object' && !Array.isArray(meta)) (meta as Record<string, unknown>)[META_SERVER_INFO] = o.serverInfo;
  else result._meta = { [META_SERVER_INFO]: o.serverInfo };
  if (call.spec.cacheable && result.resultType === 'complete') {
    result.ttlMs = retried ? 0 : o.ttlMs;
    result.cacheScope = o.cacheScope;
  }
  return response;
}

function isEmpty(v: unknown): boolean {
  if (v === null || typeof v !== 'object') return true;
  for (const _ in v) return false;
  return true;
}

/**
 * A request's params as a 2025 upstream is sent them: the era's own keys stripped (version, client
 * info, log level, input responses and state), progress and trace context kept. The request's client
 * capabilities are kept too for a request that may need input (`keepCapabilities`), when it declared
 * any: a 2025 upstream ignores them, and one that reads them asks only for what this client can answer
 * (otherwise the gateway must refuse the call with -32021). An empty set is not sent (every byte of
 * every upstream message counts); an upstream that reads none then assumes what the gateway declared.
 */
export function upstreamParams(params: Record<string, unknown>, keepCapabilities = true): Record<string, unknown> | undefined {
  // One pass, no intermediate arrays: this runs for every modern request.
  let out: Record<string, unknown> | undefined;
  for (const k in params) {
    if (k === 'inputResponses' || k === 'requestState') continue;
    const v = params[k];
    if (k !== '_meta') {
      (out ??= {})[k] = v;
      continue;
    }
    if (v === null || typeof v !== 'object' || Array.isArray(v)) continue;
    let kept: Record<string, unknown> | undefined;
    for (const m in v as Record<string, unknown>) {
      const value = (v as Record<string, unknown>)[m];
      if (!m.startsWith('io.modelcontextprotocol/') || (m === META_CAPABILITIES && keepCapabilities && !isEmpty(value))) (kept ??= {})[m] = value;
    }
    if (kept) (out ??= {})._meta = kept;
  }
  return out;
}
