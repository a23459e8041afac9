import { toJsonRpcError } from '../errors.js';
import type { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import type { HiddenTextGuard } from '../policy/hidden-text-guard.js';
import type { SessionGuard } from '../policy/session-guard.js';
import { blocked } from './stages/hidden-text-stage.js';

const SAMPLING = 'sampling/createMessage';

/**
 * What an upstream's server→client request is relayed with. A sampling request's messages and system
 * prompt are what the client's model reads, after a person approved what they saw of them: hidden text
 * there reads otherwise to each (before 2026-12-06 it was relayed unscanned). Scanned with the results'
 * action, as the text a server gives a model: passed on (audit), cleaned (strip), or refused to the
 * upstream with SWB_HIDDEN_TEXT_BLOCKED (block), never put to the client. Other requests (elicitation,
 * roots) are for a person or the client itself, and go as they are.
 */
export function screenedAsk(hiddenText: HiddenTextGuard, guard: SessionGuard, method: string, params: Record<string, unknown> | undefined): Record<string, unknown> | undefined | JsonRpcError {
  if (method !== SAMPLING || params === undefined) return params;
  const policy = hiddenText.for(guard.tenant);
  if (policy === undefined || policy.results === 'off') return params;
  const walked = policy.scanResult(params);
  if (walked === undefined) return params;
  const caller = { upstream: undefined, name: SAMPLING, tenant: guard.tenant.name, subject: guard.principal.subject, session: guard.session };
  const verdict = policy.settleResult('sampling', walked, params, caller);
  if ('result' in verdict) return verdict.result;
  return toJsonRpcError(blocked('The sampling request was', verdict.blocked));
}
