import { ErrorCode } from '../jsonrpc/error-codes.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import { parseText, validateMessage } from '../jsonrpc/parse.js';
import type { JsonRpcMessage } from '../jsonrpc/types.js';

export interface ReadMessages {
  messages: JsonRpcMessage[];
  batch: boolean;
}

/**
 * Body text → validated messages. Throws a JsonRpcError (answered with HTTP 400) on any defect. A batch
 * longer than maxBatch is refused before its messages are checked: nothing of it is handled.
 */
export function readMessages(body: unknown, maxDepth?: number, maxBatch?: number): ReadMessages {
  const text = typeof body === 'string' ? body : Buffer.isBuffer(body) ? body.toString('utf8') : '';
  const doc = parseText(text, maxDepth);
  if (Array.isArray(doc)) {
    if (doc.length === 0) throw new JsonRpcError(ErrorCode.InvalidRequest, 'Invalid Request: an empty batch');
    if (maxBatch !== undefined && doc.length > maxBatch) {
      throw new JsonRpcError(ErrorCode.InvalidRequest, `Invalid Request: a batch of ${doc.length} messages; at most ${maxBatch} per POST (server.maxBatchMessages)`);
    }
    return { messages: doc.map(validateMessage), batch: true };
  }
  return { messages: [validateMessage(doc)], batch: false };
}
