import { listMethods, type ListSpec } from '../jsonrpc/methods.js';
import type { UpstreamReach } from './capabilities.js';
import type { Curation } from './curation.js';
import { prefixed } from './names.js';

/** What reachesUpstream is asked of an upstream per list: whether the caller may see an item of that kind of it. */
const ASKED: Readonly<Record<ListSpec['key'], Record<string, unknown>>> = Object.freeze({
  tools: Object.freeze({ tools: {} }),
  prompts: Object.freeze({ prompts: {} }),
  resources: Object.freeze({ resources: {} }),
  resourceTemplates: Object.freeze({ resources: {} }),
});

/**
 * Whether the caller may be shown an item of `upstream`'s list of `key`, as far as the globs tell without the
 * list (errs towards yes): its tenant's policy reaches it (TenantPolicy.reachesUpstream; no tenant given: it
 * does) and, for tools, the curation it sees may hold one (Curation.mayShowUnder). An upstream it may not is
 * no part of an answer made of the lists, aggregated or search mode's: its failure neither fails the answer
 * nor is named in it (failAsList).
 */
export function mayShowOf(upstream: string, key: ListSpec['key'], prefixNames: boolean, curation: Curation, tenant: UpstreamReach | undefined): boolean {
  if (tenant && !tenant.reachesUpstream(upstream, prefixNames, ASKED[key])) return false;
  return key !== 'tools' || curation.mayShowUnder(prefixNames ? prefixed(upstream, '') : '');
}

/** Each list_changed notification → a list it says changed (resources' two lists ask the same of an upstream). */
const CHANGED: ReadonlyMap<string, ListSpec['key']> = new Map(listMethods().map((s) => [s.list.listChanged, s.list.key]));

/**
 * Whether the caller is told `upstream`'s `method`: a list_changed only when it may be shown an item of that list
 * of it (mayShowOf), as its lists, cursors and instructions leave the upstream out; any other notification, yes.
 */
export function hearsChange(upstream: string, method: string, prefixNames: boolean, curation: Curation, tenant: UpstreamReach | undefined): boolean {
  const key = CHANGED.get(method);
  return key === undefined || mayShowOf(upstream, key, prefixNames, curation, tenant);
}
