import type { Principal } from '../auth/principal.js';
import { methodSpec, targetOf } from '../jsonrpc/methods.js';
import { isRequest, type JsonRpcMessage } from '../jsonrpc/types.js';
import type { AuditLog } from './audit-log.js';
import { auditedName } from './session-guard.js';

/** The rule an audit line names for a request refused over the tenant's requestsPerSecond. */
export const RATE_RULE = 'limits.requestsPerSecond';

/** A tools/call's params as the audit names the call: the call a call_tool wraps, a renamed tool by its canonical name. */
export type CallAs = (params: Record<string, unknown> | undefined) => Record<string, unknown> | undefined;

/**
 * The audit lines of a POST's requests refused with 429 for the tenant's request rate: one per audited
 * request (tools/call, prompts/get, resources/read), a denial like one refused for the concurrent-request
 * limit. Refused at the edge, before a session is looked up: `session` is empty (a session id the client
 * names is not its until the session is found), `upstream` unknown. Only called once the rate refused, so
 * a request let through costs nothing here, and nothing is charged again.
 */
export function auditRateRefused(audit: AuditLog, endpoint: string, principal: Principal, messages: readonly JsonRpcMessage[], callAs?: CallAs): void {
  for (const m of messages) {
    if (!isRequest(m) || methodSpec(m.method)?.audited !== true) continue;
    const sent = m.params as Record<string, unknown> | undefined;
    const params = callAs && m.method === 'tools/call' ? callAs(sent) : sent;
    const target = targetOf(m.method, params);
    if (!target) continue;
    const event = {
      tenant: principal.tenant,
      subject: principal.subject,
      session: '',
      endpoint,
      method: m.method,
      upstream: undefined,
      name: auditedName(target),
      decision: 'deny' as const,
      rule: RATE_RULE,
      outcome: 'denied' as const,
      latencyMs: 0,
      responseBytes: 0,
    };
    audit.record(event, m.method === 'tools/call' || m.method === 'prompts/get' ? params?.arguments : undefined);
  }
}
