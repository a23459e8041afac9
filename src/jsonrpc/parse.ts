import { ErrorCode } from './error-codes.js';
import { JsonRpcError } from './json-rpc-error.js';
import type { JsonRpcMessage, RequestId } from './types.js';

const ID_RULE = '"id" must be a string or an integer';

/** Why an id is refused: an integer too large to come back byte-identical gets its own explanation. */
function idRule(id: unknown, orNull = false): string {
  if (Number.isInteger(id)) return '"id" is an integer beyond 2^53 - 1, which cannot be echoed back exactly: send such ids as strings';
  return orNull ? '"id" must be a string, an integer or null' : ID_RULE;
}

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
    if (hasId && !isValidId(m.id)) throw invalid(idRule(m.id), null);
    if ('result' in m || 'error' in m) throw invalid('a request must not carry "result" or "error"', id);
    return m as unknown as JsonRpcMessage;
  }
  // A response.
  if (!hasId) throw invalid('a message needs "method" or "id"', null);
  const hasResult = 'result' in m;
  const hasError = 'error' in m;
  if (hasResult === hasError) throw invalid('a response carries exactly one of "result" and "error"', id);
  if (hasResult) {
    if (!isValidId(m.id)) throw invalid(idRule(m.id), null);
    if (m.result === null || typeof m.result !== 'object' || Array.isArray(m.result)) throw invalid('"result" must be an object', id);
  } else {
    if (m.id !== null && !isValidId(m.id)) throw invalid(idRule(m.id, true), null);
    const e = m.error as Record<string, unknown> | null;
    if (e === null || typeof e !== 'object' || !Number.isInteger(e.code) || typeof e.message !== 'string') {
      throw invalid('"error" must be an object with an integer "code" and a string "message"', id);
    }
  }
  return m as unknown as JsonRpcMessage;
}

/**
 * Parses text into one message or (when batches are allowed) an array of them. With `maxDepth`, a
 * document nested deeper (arrays and objects; the message itself is level 1) is refused with -32600:
 * such a value would overflow the stack of every recursive walk after parsing (serialising, cloning).
 */
export function parseText(text: string, maxDepth?: number): unknown {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new JsonRpcError(ErrorCode.ParseError, `Parse error: ${(err as Error).message}`);
  }
  if (maxDepth !== undefined && bracketsExceed(text, maxDepth) && nestedDeeperThan(doc, maxDepth)) {
    throw new JsonRpcError(ErrorCode.InvalidRequest, `Invalid Request: the message nests arrays and objects deeper than ${maxDepth} levels`);
  }
  return doc;
}

/** Whether a parsed document nests deeper than `limit` levels; its text clears nearly every one at the cost of a scan. */
export function nestsDeeper(text: string, doc: unknown, limit: number): boolean {
  return bracketsExceed(text, limit) && nestedDeeperThan(doc, limit);
}

/**
 * Whether the text has more than `limit` opening brackets (strings included): an upper bound on its
 * nesting, so nearly every message is cleared by a scan of the text and only the rare one with many
 * brackets is walked after parsing. indexOf scans natively: a loop over charCodeAt in JavaScript cost
 * ten times as much on a 220-byte request, a hundred times on a 100 kB one (it ran on every request).
 */
function bracketsExceed(text: string, limit: number): boolean {
  // No text shorter than the limit holds more brackets: every message of ordinary size (each one a stdio or
  // remote upstream sends is asked about) is cleared without a scan.
  if (text.length <= limit) return false;
  let n = 0;
  for (let i = text.indexOf('{'); i !== -1; i = text.indexOf('{', i + 1)) if (++n > limit) return true;
  for (let i = text.indexOf('['); i !== -1; i = text.indexOf('[', i + 1)) if (++n > limit) return true;
  return false;
}

/** Whether arrays and objects nest deeper than `limit` levels; iterative, so any depth is safe to ask about. */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  const stack: unknown[] = [value];
  const depths: number[] = [1];
  while (stack.length > 0) {
    const v = stack.pop() as object;
    const d = depths.pop()!;
    if (d > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === 'object') {
        stack.push(child);
        depths.push(d + 1);
      }
    }
  }
  return false;
}

/**
 * A string, or an integer JavaScript represents exactly. A larger integer (beyond 2^53 - 1) would come
 * back changed after parsing (2^64 as 18446744073709552000), so it is refused rather than answered
 * with an id the client never sent; clients use string ids for such values.
 */
export function isValidId(id: unknown): id is RequestId {
  return typeof id === 'string' || Number.isSafeInteger(id);
}

function readableId(id: unknown): RequestId | null {
  return isValidId(id) ? id : null;
}

function invalid(detail: string, id: RequestId | null): JsonRpcError {
  return new JsonRpcError(ErrorCode.InvalidRequest, `Invalid Request: ${detail}`, id === null ? undefined : { id });
}
