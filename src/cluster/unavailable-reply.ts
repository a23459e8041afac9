import type { ServerResponse } from 'node:http';
import { isJsonObject, type RequestId } from '../jsonrpc/types.js';

/** A request's id (a string or an integer, as JSON-RPC has it); undefined for a notification, a response or anything else. */
function requestIdOf(m: unknown): RequestId | undefined {
  if (!isJsonObject(m) || typeof m.method !== 'string') return undefined;
  const id = m.id;
  return typeof id === 'string' || Number.isSafeInteger(id) ? (id as RequestId) : undefined;
}

/**
 * The id a refusal of a forwarded POST answers with: its request's, or a batch's first request's (as the
 * edge answers a batch it refuses whole); null only when its body holds no request id that can be read.
 * Read from the body the forward carries, and only on a refusal: a forward that is relayed never parses it here.
 */
export function forwardedRequestId(body: string | undefined): RequestId | null {
  if (body === undefined) return null;
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    return null;
  }
  if (!Array.isArray(doc)) return requestIdOf(doc) ?? null;
  for (const m of doc) {
    const id = requestIdOf(m);
    if (id !== undefined) return id;
  }
  return null;
}

/**
 * A forward that gets no answer from its session's owner: 503, with Retry-After when a retry is harmless.
 * `body` is the forwarded request's: its id goes on the JSON-RPC error (before 2026-12-07 it was always null,
 * which a client cannot match to the request it sent).
 */
export function replyUnavailable(res: ServerResponse, body: string | undefined, message: string, retryAfter = true): void {
  const answer = { jsonrpc: '2.0', id: forwardedRequestId(body), error: { code: -32000, message } };
  res.writeHead(503, { 'content-type': 'application/json', ...(retryAfter ? { 'retry-after': '1' } : {}) }).end(JSON.stringify(answer));
}
