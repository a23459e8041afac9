import type { EndpointConfig } from '../config/schema.js';

/**
 * Whether an answer made of every upstream's list fails when an upstream's list failed (with the first
 * such error): when no upstream listed at all, and under failureMode closed, where an answer that
 * silently misses an upstream's part must not be given, unless its caller takes a partial one (a lookup
 * made for another request). The one rule for the aggregated lists and for the search-mode answers made
 * of the tool view (tools/list's meta-tools, search_tools): see RouterSession.
 */
export function listFails(failureMode: EndpointConfig['failureMode'], listed: number, partial: boolean): boolean {
  return listed === 0 || (failureMode === 'closed' && !partial);
}

/**
 * An answer made of the upstreams' lists (an aggregated list; search mode's, of the tool view) fails as
 * listFails says, counting only the upstreams the caller may be shown an item of (`counts`: mayShowOf; all
 * when absent). One it may see nothing of is no part of its answer, so its failure neither fails the answer nor
 * is named in it (before 2026-12-07, under failureMode closed, it did both, telling the caller of an upstream
 * its policy or curation hides). `failures`: why each upstream that did not list did not, in the endpoint's
 * order; `listed`: the upstreams asked (one also in `failures` did not list). Throws the first counted failure.
 */
export function failAsList(failures: ReadonlyMap<string, unknown>, listed: Iterable<string>, failureMode: EndpointConfig['failureMode'], counts: (upstream: string) => boolean = () => true, partial = false): void {
  const first = [...failures].find(([upstream]) => counts(upstream));
  if (first === undefined) return;
  let n = 0;
  for (const upstream of listed) if (!failures.has(upstream) && counts(upstream)) n++;
  if (listFails(failureMode, n, partial)) throw first[1];
}
