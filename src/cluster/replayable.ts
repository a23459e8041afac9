import { methodSpec } from '../jsonrpc/methods.js';

/**
 * Whether an HTTP request that reached a replica which then died may be run again elsewhere: its effect
 * twice is its effect once. A GET (open a stream) or DELETE (end a session) is; a POST is when every
 * request it carries is idempotent by the method table (`tools/list`, `resources/read`, `ping`, …).
 * Notifications and responses are, too: sent twice they change nothing the first one did not. A body
 * that cannot be read as JSON-RPC is not: nothing is replayed on a guess.
 */
export function replayable(method: string, body: string | undefined): boolean {
  if (method === 'GET' || method === 'DELETE') return true;
  if (method !== 'POST' || body === undefined) return false;
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    return false;
  }
  const messages = Array.isArray(doc) ? doc : [doc];
  return messages.length > 0 && messages.every(safeTwice);
}

function safeTwice(m: unknown): boolean {
  if (typeof m !== 'object' || m === null) return false;
  const { id, method } = m as { id?: unknown; method?: unknown };
  if (typeof method !== 'string') return id !== undefined; // a response (result or error)
  if (id === undefined) return true; // a notification
  return methodSpec(method)?.idempotent === true;
}
