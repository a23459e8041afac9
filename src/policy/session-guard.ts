import type { Principal } from '../auth/principal.js';
import type { ArgumentViolation } from './argument-rules.js';
import type { AuditLog } from './audit-log.js';
import type { CatalogueKind, Decision } from './decision.js';
import type { LimitCounters } from './limit-counters.js';
import type { TenantPolicy } from './tenant-policy.js';

type Params = Record<string, unknown> | undefined;
type Result = Record<string, unknown>;

const AUDITED = new Set(['tools/call', 'resources/read', 'prompts/get']);

const LIST_FILTERS: Record<string, { key: string; kind: CatalogueKind; field: string }> = {
  'tools/list': { key: 'tools', kind: 'tool', field: 'name' },
  'prompts/list': { key: 'prompts', kind: 'prompt', field: 'name' },
  'resources/list': { key: 'resources', kind: 'resource', field: 'uri' },
  'resources/templates/list': { key: 'resourceTemplates', kind: 'resource', field: 'uriTemplate' },
};

/** What a request reaches in the catalogue, when it reaches anything. */
export function targetOf(method: string, params: Params): { kind: CatalogueKind; name: string } | undefined {
  switch (method) {
    case 'tools/call':
      return { kind: 'tool', name: String(params?.name) };
    case 'prompts/get':
      return { kind: 'prompt', name: String(params?.name) };
    case 'resources/read':
    case 'resources/subscribe':
    case 'resources/unsubscribe':
      return { kind: 'resource', name: String(params?.uri) };
    case 'completion/complete': {
      const ref = params?.ref as Record<string, unknown> | undefined;
      if (ref?.type === 'ref/prompt') return { kind: 'prompt', name: String(ref.name) };
      if (ref?.type === 'ref/resource') return { kind: 'resource', name: String(ref.uri) };
      return undefined;
    }
    default:
      return undefined;
  }
}

export interface GuardIds {
  session: string;
  endpoint: string;
}

/**
 * A session's policy, bound to its principal and tenant: what it may reach, what its lists show,
 * how many requests it may have in flight, and the audit trail of what it did.
 */
export class SessionGuard {
  /** The latest verified token's principal: same issuer, subject and tenant; its scopes may change. */
  principal: Principal;
  readonly tenant: TenantPolicy;
  readonly #counters: LimitCounters;
  readonly #audit: AuditLog | undefined;
  readonly #ids: GuardIds;
  #holdsSession = false;

  constructor(principal: Principal, tenant: TenantPolicy, counters: LimitCounters, audit: AuditLog | undefined, ids: GuardIds) {
    this.principal = principal;
    this.tenant = tenant;
    this.#counters = counters;
    this.#audit = audit;
    this.#ids = ids;
  }

  /**
   * Each request's token decides its scopes: a refreshed token with more scopes (step-up) or fewer
   * (downgrade) takes effect at once. The edge has checked issuer, subject and tenant already.
   */
  refresh(principal: Principal): void {
    this.principal = principal;
  }

  check(method: string, params: Params): (Decision & { kind: CatalogueKind; name: string }) | undefined {
    const target = targetOf(method, params);
    if (!target) return undefined;
    const d = this.tenant.decide(target.kind, target.name, this.principal.scopes);
    return { allowed: d.allowed, rule: d.rule, missingScopes: d.missingScopes, kind: target.kind, name: target.name };
  }

  /**
   * The tenant's argument rules for a tools/call the decision allowed, checked before it is routed so
   * that a refused call never reaches the upstream.
   */
  checkArguments(method: string, params: Params, upstreamWhenUnprefixed?: string): ArgumentViolation | undefined {
    const rules = this.tenant.argumentRules;
    if (!rules || method !== 'tools/call') return undefined; // tenants without rules pay nothing more
    const name = String(params?.name);
    return rules.check(name, params?.arguments, upstreamWhenUnprefixed === undefined ? undefined : `${upstreamWhenUnprefixed}__${name}`);
  }

  /** Scopes the token lacks for this request, for an HTTP 403 insufficient_scope (step-up). */
  missingScopes(method: string, params: Params): string[] | undefined {
    if (!this.tenant.hasScopedRules) return undefined; // the common case costs nothing per request
    return this.check(method, params)?.missingScopes;
  }

  filterList(method: string, result: Result): Result {
    const f = LIST_FILTERS[method];
    const items = f && result[f.key];
    if (!f || !Array.isArray(items)) return result;
    const kept = items.filter((item: Record<string, unknown>) => this.tenant.decide(f.kind, String(item[f.field]), this.principal.scopes).allowed);
    return kept.length === items.length ? result : { ...result, [f.key]: kept };
  }

  /** Opens a session slot for the tenant; false at the tenant's session limit. */
  async openSession(): Promise<boolean> {
    const max = this.tenant.config.limits.sessions;
    if (max === undefined) return true;
    this.#holdsSession = await this.#counters.acquire(`sessions:${this.tenant.name}`, max);
    return this.#holdsSession;
  }

  closeSession(): void {
    if (this.#holdsSession) this.#counters.release(`sessions:${this.tenant.name}`);
    this.#holdsSession = false;
  }

  /** A slot among the tenant's concurrent requests; false at the limit. */
  acquireRequest(): boolean | Promise<boolean> {
    const max = this.tenant.config.limits.concurrentRequests;
    return max === undefined || this.#counters.acquire(`inflight:${this.tenant.name}`, max);
  }

  releaseRequest(): void {
    if (this.tenant.config.limits.concurrentRequests !== undefined) this.#counters.release(`inflight:${this.tenant.name}`);
  }

  /** A request refused before it was routed (scope step-up, a limit): audited as a denial with its rule. */
  refused(method: string, params: Params, rule: string): void {
    this.record(method, params, { allowed: false, rule }, 'denied', Date.now(), undefined, undefined);
  }

  audits(method: string): boolean {
    return this.#audit !== undefined && AUDITED.has(method);
  }

  /** `resultBytes`: the answer's size as it arrived, when known; otherwise `result` is measured. */
  record(method: string, params: Params, decision: Decision, outcome: 'ok' | 'error' | 'tool_error' | 'denied' | 'cancelled', startedAt: number, result: unknown, upstream: string | undefined, resultBytes?: number): void {
    if (!this.#audit || !AUDITED.has(method)) return;
    const target = targetOf(method, params)!;
    this.#audit.record({
      tenant: this.tenant.name,
      subject: this.principal.subject,
      session: this.#ids.session,
      endpoint: this.#ids.endpoint,
      method,
      upstream,
      name: target.name,
      decision: decision.allowed ? 'allow' : 'deny',
      rule: decision.rule,
      outcome,
      latencyMs: Date.now() - startedAt,
      responseBytes: resultBytes ?? (result === undefined ? 0 : Buffer.byteLength(JSON.stringify(result))),
      arguments: method === 'tools/call' ? params?.arguments : method === 'prompts/get' ? params?.arguments : undefined,
    });
  }
}
