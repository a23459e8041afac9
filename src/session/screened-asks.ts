import { toJsonRpcError } from '../errors.js';
import type { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import type { HiddenTextGuard } from '../policy/hidden-text-guard.js';
import type { SessionGuard } from '../policy/session-guard.js';
import { blocked } from './stages/hidden-text-stage.js';

/** The server→client requests scanned, and what each is. */
const ASKS: ReadonlyMap<string, 'sampling' | 'elicitation'> = new Map([
  ['sampling/createMessage', 'sampling'],
  ['elicitation/create', 'elicitation'],
]);

/**
 * What an upstream's server→client request is relayed with. A sampling request's messages and system
 * prompt are what the client's model reads, after a person approved what they saw of them: hidden text
 * there reads otherwise to each (before 2026-12-06 it was relayed unscanned). An elicitation's message and
 * form are what a person answers, and a host may render them (an image from an outside host fetched, a
 * bidi override reordering a name) or hand them to its model: before 2026-12-06 relayed unscanned too.
 * Scanned with the results' action, as text a server gives a model: passed on (audit), cleaned (strip), or
 * refused to the upstream with SWB_HIDDEN_TEXT_BLOCKED (block), never put to the client. Roots requests
 * carry no server text, and go as they are.
 */
export function screenedAsk(hiddenText: HiddenTextGuard, guard: SessionGuard, method: string, params: Record<string, unknown> | undefined): Record<string, unknown> | undefined | JsonRpcError {
  const kind = ASKS.get(method);
  if (kind === undefined || params === undefined) return params;
  const policy = hiddenText.for(guard.tenant);
  if (policy === undefined || policy.results === 'off') return params;
  const walked = policy.scanResult(params);
  if (walked === undefined) return params;
  const caller = { upstream: undefined, name: method, tenant: guard.tenant.name, subject: guard.principal.subject, session: guard.session };
  const verdict = policy.settleResult(kind, walked, params, caller);
  if ('result' in verdict) return verdict.result;
  return toJsonRpcError(blocked(`The ${kind} request was`, verdict.blocked));
}
