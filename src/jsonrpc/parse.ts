import { ErrorCode } from './error-codes.js';
import { JsonRpcError } from './json-rpc-error.js';
import type { JsonRpcMessage, RequestId } from './types.js';

/**
 * Strict validation of one decoded JSON value as a JSON-RPC 2.0 message.
 * Returns the message, or throws a JsonRpcError carrying the id when one could be read, so the
 * caller can answer the peer precisely. Unknown top-level members are tolerated (forward compatible).
 */
export function validateMessage(value: unknown): JsonRpcMessage {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new JsonRpcError(ErrorCode.InvalidRequest, 'Invalid Request: a JSON-RPC message must be an object');
  }
  const m = value as Record<string, unknown>;
  const id = readableId(m.id);
  if (m.jsonrpc !== '2.0') throw invalid('"jsonrpc" must be "2.0"', id);
  const hasId = 'id' in m;
  if ('method' in m) {
    if (typeof m.method !== 'string' || m.method.length === 0) throw invalid('"method" must be a non-empty string', id);
    if ('params' in m && m.params !== undefined && (m.params === null || typeof m.params !== 'object' || Array.isArray(m.params))) {
      // MCP only ever uses by-name params.
      throw invalid('"params" must be an object', id);
    }
    if (hasId && !isValidId(m.id)) throw invalid('"id" must be a string or an integer', null);
    if ('result' in m || 'error' in m) throw invalid('a request must not carry "result" or "error"', id);
    return m as unknown as JsonRpcMessage;
  }
  // A response.
  if (!hasId) throw invalid('a message needs "method" or "id"', null);
  const hasResult = 'result' in m;
  const hasError = 'error' in m;
  if (hasResult === hasError) throw invalid('a response carries exactly one of "result" and "error"', id);
  if (hasResult) {
    if (!isValidId(m.id)) throw invalid('"id" must be a string or an integer', null);
    if (m.result === null || typeof m.result !== 'object' || Array.isArray(m.result)) throw invalid('"result" must be an object', id);
  } else {
    if (m.id !== null && !isValidId(m.id)) throw invalid('"id" must be a string, an integer or null', null);
    const e = m.error as Record<string, unknown> | null;
    if (e === null || typeof e !== 'object' || !Number.isInteger(e.code) || typeof e.message !== 'string') {
      throw invalid('"error" must be an object with an integer "code" and a string "message"', id);
    }
  }
  return m as unknown as JsonRpcMessage;
}

/** Parses text into one message or (when batches are allowed) an array of them. */
export function parseText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new JsonRpcError(ErrorCode.ParseError, `Parse error: ${(err as Error).message}`);
  }
}

export function isValidId(id: unknown): id is RequestId {
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id));
}

function readableId(id: unknown): RequestId | null {
  return isValidId(id) ? id : null;
}

function invalid(detail: string, id: RequestId | null): JsonRpcError {
  return new JsonRpcError(ErrorCode.InvalidRequest, `Invalid Request: ${detail}`, id === null ? undefined : { id });
}
