/**
 * Paging of the admin API's lists (GET /sessions, /pins, /links): `?limit=` items at most (default
 * 100, at most 1000) and an opaque `nextCursor` while more remain. Items come in the order of a key of
 * their own (a session's id; a pin's upstream and tool; a link's upstream and user), compared by their
 * UTF-8 bytes (as Redis orders a sorted set's members, which the links are read by), never by locale:
 * every replica orders them alike, so a cursor one gave another continues, and
 * following the cursors visits each item there throughout once (one added or ended meanwhile may or may
 * not be seen). The cursor is the last key given, not a position: what ends between pages shifts nothing.
 */

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

/** Where a page starts (after the key `after`; the first page: undefined) and how many it holds. */
export interface PageRequest {
  after: string | undefined;
  limit: number;
}

export interface Page<T> {
  items: T[];
  /** Present when more remain: give it back as ?cursor= for the next page. */
  nextCursor?: string;
}

/** A page another replica's admin API asks this one for (cluster question "sessions"). */
export function isPage(x: unknown): x is PageRequest {
  const p = x as PageRequest | null;
  return typeof p === 'object' && p !== null && (p.after === undefined || typeof p.after === 'string') && Number.isInteger(p.limit) && p.limit > 0 && p.limit <= MAX_LIMIT;
}

/** A list's name goes into its cursors, so that one list's cursor given to another is refused, not read. */
export type ListName = 'sessions' | 'pins' | 'links';

/** A cursor longer than this was not given by this API (a key is an id, or names and a user). */
const MAX_CURSOR = 4096;

/** The page `query` asks for, or why it cannot be read (answered 400). */
export function readPage(query: unknown, list: ListName): PageRequest | string {
  const q = (query ?? {}) as Record<string, unknown>;
  const range = `?limit= takes a whole number from 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT})`;
  if (Array.isArray(q.limit)) return `${range}, given once (it is given more than once)`;
  if (Array.isArray(q.cursor)) return '?cursor= is given more than once: pass the one nextCursor of the page before';
  let limit = DEFAULT_LIMIT;
  if (q.limit !== undefined) {
    if (typeof q.limit !== 'string' || !/^[1-9][0-9]{0,3}$/.test(q.limit) || Number(q.limit) > MAX_LIMIT) return `${range}, not ${JSON.stringify(String(q.limit).slice(0, 20))}`;
    limit = Number(q.limit);
  }
  if (q.cursor === undefined) return { after: undefined, limit };
  const after = typeof q.cursor === 'string' && q.cursor.length <= MAX_CURSOR ? keyOf(q.cursor, list) : undefined;
  return after === undefined ? `?cursor= is not a cursor GET /${list} gave (pass its nextCursor as it came; leave it out for the first page)` : { after, limit };
}

function keyOf(cursor: string, list: ListName): string | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  return text.startsWith(`${list}:`) ? text.slice(list.length + 1) : undefined;
}

/**
 * The items after the page's start, in key order, `limit` + 1 at most: the one more tells that more
 * remain. For a part of a list (this replica's sessions, the store's) that is merged with others: any
 * item of the merged page is among the first `limit` of every part that holds it.
 */
export function firstAfter<T>(items: readonly T[], key: (item: T) => string, page: PageRequest): T[] {
  const after = page.after;
  const left = after === undefined ? [...items] : items.filter((i) => compareKeys(key(i), after) > 0);
  return left.sort((x, y) => compareKeys(key(x), key(y))).slice(0, page.limit + 1);
}

/** Keys in the order of their UTF-8 bytes (Redis's ZRANGEBYLEX; differs from `<` only past U+FFFF). */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** The page of `items` (all of the list, or its first `limit` + 1 after the start), with the cursor to the next. */
export function pageOf<T>(items: readonly T[], key: (item: T) => string, page: PageRequest, list: ListName): Page<T> {
  const first = firstAfter(items, key, page);
  if (first.length <= page.limit) return { items: first };
  const shown = first.slice(0, page.limit);
  return { items: shown, nextCursor: Buffer.from(`${list}:${key(shown.at(-1)!)}`, 'utf8').toString('base64url') };
}

/**
 * The upstreams whose pins may come after the key `after`, in key order: every pin key of an upstream
 * starts with the same text (its name, quoted as JSON, which no other upstream's starts with), so one
 * upstream's pins are together in the order, and an upstream comes before another as that text does.
 * GET /pins reads them one by one until a page is full, not every upstream's.
 */
export function pinUpstreams(upstreams: readonly string[], after: string | undefined): string[] {
  const start = (u: string) => `${JSON.stringify([u]).slice(0, -1)},`;
  const left = upstreams.filter((u) => after === undefined || compareKeys(start(u), after) > 0 || after.startsWith(start(u)));
  return left.sort((a, b) => compareKeys(start(a), start(b)));
}

/** Each list's key: unique per item, the same on every replica. */
export const sessionKey = (s: { id: string }): string => s.id;
export const pinKey = (p: { upstream: string; tool: string }): string => JSON.stringify([p.upstream, p.tool]);
/** A link's: its field in the vault ("<upstream>\n<user>", upstream/vault-store.ts linkKey), which Redis's index orders. */
export const linkKey = (l: { upstream: string; issuer: string; subject: string; tenant: string }): string => `${l.upstream}\n${JSON.stringify([l.issuer, l.subject, l.tenant])}`;
