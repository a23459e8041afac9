import type { HiddenTextGuard } from '../policy/hidden-text-guard.js';
import type { SessionGuard } from '../policy/session-guard.js';
import type { RequestContext } from './request-pipeline.js';

/** A notice withheld (block): not relayed. */
export const WITHHELD = null;

/** The members of a notice that carry an upstream's text (a progress token is the client's own, and is left). */
const TEXTS: ReadonlyMap<string, { kind: 'log' | 'progress'; members: readonly string[] }> = new Map([
  ['notifications/message', { kind: 'log', members: ['logger', 'data'] }],
  ['notifications/progress', { kind: 'progress', members: ['message'] }],
]);

/**
 * What an upstream's log line (notifications/message) or progress message is relayed with. A host shows
 * both to its user and may give them to its model (a log line as context, a progress message as the
 * call's status): before 2026-12-06 they passed hidden-text scanning unscanned. Scanned with the results'
 * action: relayed as it is (audit), cleaned (strip), or withheld (block: a notice cannot be refused, so
 * it is not relayed; the audit line says so). Any other notification, and scanning off, is `params` itself.
 * `from`: the upstream that sent it, by name, or the request it came for (a progress message), whose
 * upstream is looked up only when something was found; the audit line names it (before 2026-12-06 none did).
 */
export function screenedNotice(
  hiddenText: HiddenTextGuard,
  guard: SessionGuard,
  method: string,
  params: Record<string, unknown> | undefined,
  from: string | RequestContext | undefined,
): Record<string, unknown> | undefined | typeof WITHHELD {
  const texts = params === undefined ? undefined : TEXTS.get(method);
  if (texts === undefined) return params;
  const policy = hiddenText.for(guard.tenant);
  if (policy === undefined || policy.results === 'off') return params;
  const read: Record<string, unknown> = {};
  for (const m of texts.members) if (params![m] !== undefined) read[m] = params![m];
  // Free-form JSON a host shows as it is: a `data` member in it is no base64 payload unless typed, a `_meta` is data (see walkResult).
  const walked = policy.scanResult(read, true);
  if (walked === undefined) return params;
  const upstream = typeof from === 'object' ? from.host.router?.upstreamOf(from.req.method, from.req.params, from.spec) : from;
  const caller = { upstream, name: method, tenant: guard.tenant.name, subject: guard.principal.subject, session: guard.session };
  const verdict = policy.settleResult(texts.kind, walked, read, caller);
  return 'result' in verdict ? { ...params, ...verdict.result } : WITHHELD;
}
