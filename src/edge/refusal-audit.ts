import type { EdgeRequest } from './edge-exchange.js';
import { methodSpec } from '../jsonrpc/methods.js';
import { isJsonObject, isRequest, type JsonRpcMessage } from '../jsonrpc/types.js';
import { isModernMessage } from '../modern/modern-request.js';
import type { ModernService } from '../modern/modern-service.js';

/**
 * Whether a request the edge refuses before anything serves it (the tenant's rate: 429; a scope its token
 * lacks: 403) is a call of its own, audited as the denial it is. The one place the edge decides it, for
 * both refusals: a 2026-07-28 retry answering an input_required round of one of this caller's calls is not
 * (the call goes on waiting for a retry that gets through, and has its one line when it ends). What makes
 * such a retry is the modern service's to say (ModernService.answersRound): a requestState it sealed for
 * this caller and this request. Any other string there leaves the request a call: a client adding one to
 * every request would otherwise have its denials audited nowhere. A promise only when the service must ask
 * the shared store (a state another replica holds).
 */
export function auditsRefusal(modern: ModernService | undefined, req: EdgeRequest, endpoint: string, m: JsonRpcMessage): boolean | Promise<boolean> {
  if (!modern || !isRequest(m) || !isJsonObject(m.params) || typeof m.params.requestState !== 'string') return true;
  const spec = methodSpec(m.method);
  if (spec?.mrtr !== true || !isModernMessage(req.headers, m)) return true;
  const retry = modern.answersRound(req.principal!, { method: m.method, params: m.params, spec }, endpoint);
  return retry instanceof Promise ? retry.then((r) => !r) : !retry;
}
