import { createHash } from 'node:crypto';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import type { UpstreamCaller, UpstreamInstance, UpstreamPool } from '../upstream/index.js';

/**
 * The gateway's own pagination cursor over a fan-out list: for each upstream that has more pages,
 * that upstream's opaque cursor, or undefined for one to be listed from its start (deferred: see
 * planPage). Tagged with the list method so a cursor cannot be replayed elsewhere.
 */
export type CompositeCursor = Record<string, string | undefined>;

/**
 * The longest cursor taken back, and so the longest the gateway hands out (planPage): a bound on what a
 * client makes it parse. Three upstreams' 2 KB cursors already made 8.8 KB.
 */
export const MAX_CURSOR_CHARS = 65_536;

/** The JSON a cursor of MAX_CURSOR_CHARS base64url characters holds. */
const MAX_JSON_BYTES = Math.floor((MAX_CURSOR_CHARS * 3) / 4);

/** `fresh`: upstreams to be listed from their start on the next page. */
export function encodeCursor(method: string, remaining: Readonly<Record<string, string>>, fresh: readonly string[] = []): string | undefined {
  if (Object.keys(remaining).length === 0 && fresh.length === 0) return undefined;
  return Buffer.from(JSON.stringify(fresh.length > 0 ? { m: method, c: remaining, f: fresh } : { m: method, c: remaining })).toString('base64url');
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
  if (doc.f !== undefined && !Array.isArray(doc.f)) throw bad();
  const out: CompositeCursor = {};
  for (const [k, v] of Object.entries(doc.c)) {
    if (!upstreams.includes(k) || typeof v !== 'string') throw bad();
    out[k] = v;
  }
  for (const k of (doc.f ?? []) as unknown[]) {
    if (typeof k !== 'string' || !upstreams.includes(k) || Object.hasOwn(out, k)) throw bad();
    out[k] = undefined;
  }
  if (Object.keys(out).length === 0) throw bad();
  return out;
}

/** One upstream's page of a fan-out list: whether it was asked from its start, and its next cursor. */
export interface PagePart {
  name: string;
  fresh: boolean;
  next: string | undefined;
}

export interface PagePlan {
  cursor: string | undefined;
  /** Listed from their start, their page not shown now: no room for their cursors yet (a later page has it). */
  deferred: ReadonlySet<string>;
  /** An upstream whose next cursor cannot fit in a cursor at all: the rest of its list is left out (as a failed one). */
  dropped: ReadonlySet<string>;
}

const bytes = (s: string) => Buffer.byteLength(JSON.stringify(s)) + 1;

/**
 * The cursor of a page, never longer than decodeCursor takes back. An upstream already past its first
 * page always goes on (its next cursor replaces the one it was asked with), so every page makes progress;
 * one asked from its start takes room only if there is some: else its page waits, and it is listed from
 * its start again once the others are done (its name is all the cursor keeps of it). An upstream's cursor
 * that alone cannot fit (tens of KB) has no way through: left out, as an upstream whose list fails.
 */
export function planPage(method: string, parts: readonly PagePart[]): PagePlan {
  const deferred = new Set<string>();
  const dropped = new Set<string>();
  const waiting = parts.filter((p) => p.fresh && p.next !== undefined);
  const going = parts.filter((p) => !p.fresh && p.next !== undefined).sort((a, b) => a.next!.length - b.next!.length);
  // Each entry counted with a separator; the names of all that may wait counted first.
  let size = Buffer.byteLength(JSON.stringify({ m: method, c: {}, f: [] })) + waiting.reduce((n, p) => n + bytes(p.name), 0);
  const floor = size;
  const c: Record<string, string> = {};
  for (const p of going) {
    const cost = bytes(p.name) + bytes(p.next!);
    if (size + cost <= MAX_JSON_BYTES) (c[p.name] = p.next!), (size += cost);
    else dropped.add(p.name);
  }
  for (const p of waiting) {
    const cost = bytes(p.next!);
    if (floor + cost > MAX_JSON_BYTES) dropped.add(p.name);
    else if (size + cost <= MAX_JSON_BYTES) (c[p.name] = p.next!), (size += cost);
    else deferred.add(p.name);
  }
  const fresh = waiting.filter((p) => deferred.has(p.name)).map((p) => p.name);
  return { cursor: encodeCursor(method, c, fresh), deferred, dropped };
}

/** Cursors a session remembers the issuer of: a client walks a list or two at once, not dozens. */
const MAX_ISSUED = 32;

/**
 * Which instance of a pool handed out each upstream cursor a session was given. A shared upstream of
 * several processes (pool.size) sends each request to the least busy one, and so the next page of a list
 * went to whichever that was: a process whose cursors are its own (pages kept in memory, an upstream
 * session's) refused the other's, and the rest of its list was silently left out. The next page is now
 * asked of the process that gave the cursor, while it runs and serves the session. Keyed by a digest (an
 * upstream's cursor may take tens of KB); a cursor it does not know (another session's, another replica's)
 * goes to any instance, as before.
 */
export class CursorIssuers {
  readonly #issued = new Map<string, UpstreamInstance>();

  /**
   * The instance for a request: the one that gave `cursor` while it is ready and serves `caller`, else the
   * pool's pick (made either way: a per-user pool counts its user's use by it).
   */
  instanceFor(pool: UpstreamPool, cursor: string | undefined, caller: UpstreamCaller): UpstreamInstance {
    const picked = pool.instanceFor(caller);
    if (cursor === undefined || this.#issued.size === 0) return picked;
    const inst = this.#issued.get(key(pool.name, cursor));
    return inst && inst.state === 'ready' && pool.serves(caller, inst) ? inst : picked;
  }

  /** `page` came from `inst`: its next cursor, if any, is remembered as that instance's. Returns the page. */
  note<P extends Record<string, unknown>>(pool: UpstreamPool, inst: UpstreamInstance, page: P): P {
    if (typeof page.nextCursor !== 'string' || pool.instances.size < 2) return page;
    const k = key(pool.name, page.nextCursor);
    this.#issued.delete(k);
    if (this.#issued.size >= MAX_ISSUED) this.#issued.delete(this.#issued.keys().next().value!);
    this.#issued.set(k, inst);
    return page;
  }
}

const key = (upstream: string, cursor: string) => createHash('sha256').update(upstream).update('\0').update(cursor).digest('base64');
