export type CatalogueKind = 'tool' | 'resource' | 'prompt';

/** The outcome of a policy check, with the rule that decided it (for the audit log). */
export interface Decision {
  allowed: boolean;
  rule: string;
  /** Scopes the caller would need (allowed by pattern, but its token lacks them). */
  missingScopes?: string[];
}
