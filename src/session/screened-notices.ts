import { Cancellation } from '../jsonrpc/cancellation.js';
import type { HiddenTextGuard } from '../policy/hidden-text-guard.js';
import type { SessionGuard } from '../policy/session-guard.js';
import type { RequestContext } from './request-pipeline.js';

/** A notice withheld (block): not relayed. */
export const WITHHELD = null;

/** The members of a notice that carry an upstream's text (a progress token is the client's own, and is left). */
const TEXTS: ReadonlyMap<string, { kind: 'log' | 'progress' | 'cancel'; members: readonly string[] }> = new Map([
  ['notifications/message', { kind: 'log', members: ['logger', 'data'] }],
  ['notifications/progress', { kind: 'progress', members: ['message'] }],
  ['notifications/cancelled', { kind: 'cancel', members: ['reason'] }],
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

/**
 * The cancellation of a request an upstream put to the client (a sampling or elicitation request relayed), with
 * its reason screened as a notice's: the upstream's own words when it cancelled it (peer.cancelled), which the
 * gateway's notifications/cancelled passes on and a client may show its user. Before 2026-12-08 they went
 * unscanned. Cleaned (strip), or left out (block: the client is still told, with the gateway's own reason).
 * `signal` itself with scanning of results off: nothing is allocated then.
 */
export function screenedCancel(hiddenText: HiddenTextGuard, guard: SessionGuard, signal: Cancellation, upstream: string | undefined): Cancellation {
  const policy = hiddenText.for(guard.tenant);
  if (policy === undefined || policy.results === 'off') return signal;
  const out = new Cancellation();
  const relay = () => {
    const reason = signal.reason;
    const shown = typeof reason === 'string' ? screenedNotice(hiddenText, guard, 'notifications/cancelled', { reason }, upstream) : { reason };
    out.abort(shown === WITHHELD ? undefined : shown?.reason);
  };
  if (signal.aborted) relay();
  else signal.onAbort(relay);
  return out;
}
