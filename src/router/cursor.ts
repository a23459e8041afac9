import { ErrorCode } from '../jsonrpc/error-codes.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';

/**
 * The gateway's own pagination cursor over a fan-out list: for each upstream that has more pages,
 * that upstream's opaque cursor. Tagged with the list method so a cursor cannot be replayed elsewhere.
 */
export type CompositeCursor = Record<string, string>;

/**
 * The longest cursor taken back. Ample for what the gateway itself writes (each upstream's cursor, base64:
 * three upstreams' 2 KB cursors already made 8.8 KB, which a bound of 8192 refused, so the rest of the
 * list could never be fetched), and still a bound on what a client makes it parse.
 */
const MAX_CURSOR_CHARS = 65_536;

export function encodeCursor(method: string, remaining: CompositeCursor): string | undefined {
  if (Object.keys(remaining).length === 0) return undefined;
  return Buffer.from(JSON.stringify({ m: method, c: remaining })).toString('base64url');
}

export function decodeCursor(method: string, cursor: unknown, upstreams: readonly string[]): CompositeCursor {
  const bad = () => new JsonRpcError(ErrorCode.InvalidParams, 'Invalid params: unknown or malformed cursor');
  if (typeof cursor !== 'string' || cursor.length > MAX_CURSOR_CHARS) throw bad();
  let doc: any;
  try {
    doc = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!doc || doc.m !== method || !doc.c || typeof doc.c !== 'object' || Array.isArray(doc.c)) throw bad();
  const out: CompositeCursor = {};
  for (const [k, v] of Object.entries(doc.c)) {
    if (!upstreams.includes(k) || typeof v !== 'string') throw bad();
    out[k] = v;
  }
  if (Object.keys(out).length === 0) throw bad();
  return out;
}
