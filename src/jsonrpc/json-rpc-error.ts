import type { JsonRpcErrorObject, JsonRpcFailure, RequestId } from './types.js';

/** A wire error: what goes back to a peer inside a JSON-RPC error response. */
export class JsonRpcError extends Error {
  readonly code: number;
  readonly data: unknown;
  /** The upstream that answered it, where that matters: a -32042's URL elicitations are shown as its questions. */
  upstream?: string;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = 'JsonRpcError';
    this.code = code;
    this.data = data;
  }

  static from(obj: JsonRpcErrorObject): JsonRpcError {
    return new JsonRpcError(obj.code, obj.message, obj.data);
  }

  toObject(): JsonRpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }

  toResponse(id: RequestId | null): JsonRpcFailure {
    return { jsonrpc: '2.0', id, error: this.toObject() };
  }
}
