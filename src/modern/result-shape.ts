import { ErrorCode } from '../jsonrpc/error-codes.js';
import type { JsonRpcResponse } from '../jsonrpc/types.js';
import type { ModernCall } from './modern-request.js';

import { META_SERVER_INFO } from '../jsonrpc/modern-meta.js';

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
