import type { RequestId } from '../jsonrpc/types.js';
import type { UpstreamCaller } from './upstream-caller.js';
import type { CallersOf } from './upstream-client-hooks.js';

/**
 * Whom a message started by the upstream is for. A dedicated instance (`dedicatedTo`) has one session. A
 * shared instance says nothing about it; it is only knowable when exactly one session has requests in
 * flight there. Guessing could hand one user's data to another.
 */
export function messageOwner(c: CallersOf, dedicatedTo: UpstreamCaller | undefined, ownRequest = false): { caller: UpstreamCaller; relatedRequestId: RequestId | undefined } | undefined {
  const active = c.activeCallers();
  if (dedicatedTo) return { caller: dedicatedTo, relatedRequestId: active.get(dedicatedTo) };
  // What came with the gateway's own request is no busy session's: the guess would pick one that did not ask.
  if (ownRequest || active.size !== 1) return undefined;
  const [[caller, relatedRequestId]] = [...active];
  return { caller, relatedRequestId };
}
