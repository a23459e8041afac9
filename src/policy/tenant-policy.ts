import type { RuleSetConfig, TenantConfig } from '../config/schema.js';
import type { CatalogueKind, Decision } from './decision.js';
import { globMatch } from './glob.js';
import { ArgumentRules } from './argument-rules.js';

interface CompiledRules {
  allow: Array<{ match: string; scopes: string[] }>;
  deny: string[];
}

function compile(r: RuleSetConfig): CompiledRules {
  return { allow: r.allow.map((a) => (typeof a === 'string' ? { match: a, scopes: [] } : a)), deny: r.deny };
}

/**
 * One tenant's grants. Deny wins; then the first allow pattern that matches decides, and its scopes
 * must all be in the token. Nothing matches: denied.
 */
export class TenantPolicy {
  readonly name: string;
  readonly config: TenantConfig;
  readonly #rules: Record<CatalogueKind, CompiledRules>;
  readonly #scoped: boolean;
  /** Undefined without argument rules: the per-call check is then one property read. */
  readonly argumentRules: ArgumentRules | undefined;

  constructor(config: TenantConfig) {
    this.name = config.name;
    this.config = config;
    this.argumentRules = ArgumentRules.compile(config.arguments);
    this.#rules = { tool: compile(config.tools), resource: compile(config.resources), prompt: compile(config.prompts) };
    this.#scoped = Object.values(this.#rules).some((r) => r.allow.some((a) => a.scopes.length > 0));
  }

  /** Whether any allow rule needs scopes (else no request can ever need a step-up). */
  get hasScopedRules(): boolean {
    return this.#scoped;
  }

  mayUseEndpoint(path: string): boolean {
    return this.config.endpoints.includes('*') || this.config.endpoints.includes(path);
  }

  decide(kind: CatalogueKind, name: string, scopes: ReadonlySet<string>): Decision {
    const rules = this.#rules[kind];
    for (const d of rules.deny) if (globMatch(d, name)) return { allowed: false, rule: `${kind}s.deny:${d}` };
    let missing: string[] | undefined;
    let missingRule = '';
    for (const a of rules.allow) {
      if (!globMatch(a.match, name)) continue;
      const lacking = a.scopes.filter((s) => !scopes.has(s));
      if (lacking.length === 0) return { allowed: true, rule: `${kind}s.allow:${a.match}` };
      missing ??= lacking;
      missingRule ||= `${kind}s.allow:${a.match}`;
    }
    if (missing) return { allowed: false, rule: `${missingRule} (missing scope ${missing.join(' ')})`, missingScopes: missing };
    return { allowed: false, rule: `${kind}s: no allow pattern matches` };
  }
}

/** With auth off and no tenant named "anonymous", everything is allowed (a local, single-user gateway). */
export const ALLOW_ALL: TenantConfig = Object.freeze({
  name: 'anonymous',
  endpoints: ['*'],
  tools: { allow: ['*'], deny: [] },
  resources: { allow: ['*'], deny: [] },
  prompts: { allow: ['*'], deny: [] },
  limits: {},
  arguments: [],
}) as TenantConfig;
