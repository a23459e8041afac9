import type { EndpointConfig } from '../config/schema.js';
import type { Gathered } from './session-tools.js';

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
 * A search-mode answer made of the tool view fails as an aggregated list does (listFails), counting only the
 * upstreams the caller's tenant may see a tool of (`reaches`; all when absent): one it may see nothing of is
 * no part of its answer, so its failure neither fails the answer nor is named in it (before 2026-12-07, under
 * failureMode closed, it did both, telling the caller of an upstream its policy hides). Throws the first
 * counted upstream's failure.
 */
export function failAsList({ catalogues, failures }: Gathered, failureMode: EndpointConfig['failureMode'], reaches?: (upstream: string) => boolean): void {
  if (failures.size === 0) return;
  const counts = reaches ?? (() => true);
  const failed = [...failures].find(([upstream]) => counts(upstream));
  if (failed === undefined) return;
  const listed = [...catalogues.keys()].filter(counts).length;
  if (listFails(failureMode, listed, false)) throw failed[1];
}
