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
