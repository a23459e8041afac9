export type { CatalogueKind } from '../jsonrpc/methods.js';

/**
 * Why a decision came out as it did, as a code (metrics and stages read this, never the rule text):
 * an allow pattern granted it, a deny pattern matched, no allow pattern matched, or an allow pattern
 * matched but the token lacks its scopes.
 */
export type DecisionReason = 'allowed' | 'deny_rule' | 'not_allowed' | 'missing_scope';

/** The outcome of a policy check, with the rule that decided it (for the audit log). */
export interface Decision {
  allowed: boolean;
  rule: string;
  /** Absent on decisions made outside the tenant's patterns (a limit, an argument rule: see `refused`). */
  reason?: DecisionReason;
  /** Scopes the caller would need (allowed by pattern, but its token lacks them). */
  missingScopes?: string[];
}
