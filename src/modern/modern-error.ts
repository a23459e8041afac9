import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import type { JsonRpcResponse, RequestId } from '../jsonrpc/types.js';

/**
 * A modern request refused before (or instead of) being served: the HTTP status the spec gives it,
 * and a JSON-RPC error body that carries the request id (a body-less 400 makes clients fall back).
 */
export class ModernError extends Error {
  readonly status: number;
  readonly code: number;
  readonly id: RequestId | null;
  readonly data: Record<string, unknown> | undefined;

  constructor(status: number, code: number, message: string, id: RequestId | null, data?: Record<string, unknown>) {
    super(message);
    this.name = 'ModernError';
    this.status = status;
    this.code = code;
    this.id = id;
    this.data = data;
  }

  toResponse(): JsonRpcResponse {
    return new JsonRpcError(this.code, this.message, this.data).toResponse(this.id);
  }
}
