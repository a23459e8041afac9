import { ErrorCode } from '../jsonrpc/error-codes.js';
import type { JsonRpcResponse } from '../jsonrpc/types.js';
import type { ModernCall } from './modern-request.js';

import { META_SERVER_INFO } from '../jsonrpc/modern-meta.js';

export interface ShapeOptions {
  serverInfo: Record<string, unknown>;
  ttlMs: number;
  cacheScope: 'public' | 'private';
  /** What the 2026-07-28 upstreams that answered said: the result claims no longer life nor wider scope. */
  limit?: CacheLimit | undefined;
}

/**
 * The cache hints 2026-07-28 upstreams put on their answers to one call (a list may have several): the
 * shortest ttlMs and the narrowest scope. A hint that is present but not the era's (a negative or
 * fractional ttlMs, an unknown scope) is read as the strictest, 0 and private; an absent one says nothing.
 */
export class CacheLimit {
  #ttlMs = Number.POSITIVE_INFINITY;
  #private = false;

  get ttlMs(): number {
    return this.#ttlMs;
  }

  get private(): boolean {
    return this.#private;
  }

  narrow(ttlMs: unknown, cacheScope: unknown): void {
    if (ttlMs !== undefined) this.#ttlMs = Math.min(this.#ttlMs, Number.isSafeInteger(ttlMs) && (ttlMs as number) >= 0 ? (ttlMs as number) : 0);
    if (cacheScope !== undefined && cacheScope !== 'public') this.#private = true;
  }
}

/**
 * Leads the next page's cursor of a private list: the spec gives every page of a list its first page's
 * cacheScope, and a later page may be answered by upstreams that said public alone (the private one's list
 * ended on page 1), or after a config reload made the endpoint's lists public (tenant rules taken away).
 * The gateway's cursor is base64url, which has no '.'.
 */
const PRIVATE_PAGES = 'p.';

/**
 * Whether a list request continues a private list (its cursor led by PRIVATE_PAGES): the mark is taken off
 * the cursor, which goes on as the gateway issued it. Before 2026-12-07 such a page said public.
 */
export function continuesPrivateList(call: ModernCall): boolean {
  const cursor = call.params.cursor;
  if (typeof cursor !== 'string' || !cursor.startsWith(PRIVATE_PAGES) || !call.spec.cacheable) return false;
  call.params.cursor = cursor.slice(PRIVATE_PAGES.length);
  return true;
}

/**
 * A 2025 upstream's answer as a 2026-07-28 client must see it: every result says its resultType (an
 * upstream that omits it meant "complete") and who served it; the six cacheable results say for how
 * long and for whom they may be cached (never a retry's: it carried answers meant for one round), never
 * longer nor wider than a 2026-07-28 upstream said of its own answer (`o.limit`).
 * Resource-not-found (-32002) is -32602 in this era, and it has no -32042.
 */
export function shapeModernResponse(call: ModernCall, response: JsonRpcResponse, retried: boolean, o: ShapeOptions): JsonRpcResponse {
  if ('error' in response) {
    // -32042 is not this era's: a call that can ask became a URL round before it got here; any other
    // method (a list) keeps the message and data (the links in data.elicitations) under a code it has.
    if (response.error.code === ErrorCode.UrlElicitationRequired) return { ...response, error: { ...response.error, code: ErrorCode.ServerError } };
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
  else result._meta = servedMeta(o.serverInfo);
  if (call.spec.cacheable && result.resultType === 'complete') {
    result.ttlMs = retried ? 0 : Math.min(o.ttlMs, o.limit?.ttlMs ?? o.ttlMs);
    result.cacheScope = o.limit?.private ? 'private' : o.cacheScope;
    // Private by an upstream's word or the gateway's own settings alike: a reload may make the endpoint's
    // lists public before page 2 is asked for (before 2026-12-07 only an upstream's private was marked).
    if (result.cacheScope === 'private' && typeof result.nextCursor === 'string') result.nextCursor = PRIVATE_PAGES + result.nextCursor;
  }
  return response;
}

/**
 * The answer a call ends with, as a complete result: a 2026-07-28 upstream's rounds were answered on the
 * way (legacyResult took its resultType), so a resultType still there is a 2025 upstream's, whose era has
 * none. Passed on, its "input_required" and inputRequests were a round the gateway never sealed, put to the
 * client unscreened, without the capability check, and its requestState one the retry was refused for.
 */
export function completed(response: JsonRpcResponse): JsonRpcResponse {
  if (!('result' in response)) return response;
  const result = response.result as Record<string, unknown>;
  if (result.resultType === undefined || result.resultType === 'complete') return response;
  // Rare (an upstream breaking its era): undefined members, which JSON leaves out, rather than deletes.
  result.resultType = 'complete';
  result.inputRequests = undefined;
  result.requestState = undefined;
  return response;
}

/** The `_meta` of a result that brought none: one frozen object per serverInfo, shared by every such answer. */
const SERVED = new WeakMap<object, Readonly<Record<string, unknown>>>();
/** Each shared `_meta`'s JSON member, written once (`"_meta":{…}`), with its length in UTF-8 bytes. */
const SERVED_TEXT = new WeakMap<object, { text: string; bytes: number }>();

function servedMeta(serverInfo: Record<string, unknown>): Readonly<Record<string, unknown>> {
  let meta = SERVED.get(serverInfo);
  if (!meta) {
    meta = Object.freeze({ [META_SERVER_INFO]: serverInfo });
    SERVED.set(serverInfo, meta);
    const text = `"_meta":${JSON.stringify(meta)}`;
    SERVED_TEXT.set(meta, { text, bytes: Buffer.byteLength(text) });
  }
  return meta;
}

/** The shared `_meta` met last and its member: one gateway has one serverInfo, so no WeakMap lookup per answer. */
let lastServed: unknown;
let lastMember: { text: string; bytes: number } | undefined;

/** A response as the body a modern client receives, with its length in UTF-8 bytes (its Content-Length). */
export interface ModernBody {
  readonly text: string;
  readonly bytes: number;
}

/** `{"jsonrpc":"2.0","id":` … `,"result":{` … `}}`: the envelope's ASCII bytes around the id and the members. */
const ENVELOPE_BYTES = '{"jsonrpc":"2.0","id":,"result":{}}'.length;

/**
 * A shaped response as the text a modern client receives. Nearly every result brings no `_meta`, so
 * the one it gets is the shared serverInfo member, whose JSON was written once: serialised again on
 * every answer, its six strings were about a third of the instructions a modern answer cost more than a
 * 2025 one (callgrind, one call in flight). The envelope is written here so that the member can go
 * last in the result (a response has exactly these three members). The byte length is added up from the
 * pieces, each flat and measured on V8's fast path: measuring the joined text (a rope of them) took
 * Node's slow path, which walks and flattens it (~1,300 instructions a call, Node 22).
 */
export function modernResponseBody(response: JsonRpcResponse): ModernBody {
  if (!('result' in response)) return whole(JSON.stringify(response));
  const result = response.result as Record<string, unknown>;
  const meta = result._meta;
  const member = meta === lastServed ? lastMember : meta !== null && typeof meta === 'object' ? SERVED_TEXT.get(meta) : undefined;
  if (member === undefined) return whole(JSON.stringify(response));
  lastServed = meta;
  lastMember = member;
  // Left out of the serialisation (an undefined member is skipped) and put back.
  result._meta = undefined;
  const text = JSON.stringify(result);
  result._meta = meta;
  const id = JSON.stringify(response.id);
  const empty = text.length === 2;
  const members = empty ? member.text : `${text.slice(1, -1)},${member.text}`;
  // Without the result's braces; with the comma before the member when there are others.
  const memberBytes = empty ? member.bytes : Buffer.byteLength(text) - 1 + member.bytes;
  return { text: `{"jsonrpc":"2.0","id":${id},"result":{${members}}}`, bytes: ENVELOPE_BYTES + Buffer.byteLength(id) + memberBytes };
}

function whole(text: string): ModernBody {
  return { text, bytes: Buffer.byteLength(text) };
}
