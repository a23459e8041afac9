import { PATTERN_FLAGS, reviewPatterns, type HiddenTextConfig, type TenantHiddenTextConfig } from '../config/guardrails-schema.js';
import { HiddenTextScanner } from './hidden-text.js';
import { DefinitionScans, HiddenTextPolicy, type HiddenTextDeps } from './hidden-text-policy.js';
import type { TenantPolicy } from './tenant-policy.js';

/** Pattern sets whose definition scans a guard keeps for sharing: far more than a config has tenants with their own patterns. */
const KEPT_SETS = 64;

type PatternSources = { endpoints?: ReadonlyArray<{ guardrails: { hiddenText: HiddenTextConfig } }>; tenants?: ReadonlyArray<{ guardrails?: { hiddenText?: TenantHiddenTextConfig | undefined } | undefined }> };

/**
 * What a pin review is scanned with (tool pinning is per upstream, not per endpoint or tenant): the
 * character classes, every pattern configured anywhere, and no allowed image host, so a reviewer sees
 * whatever any endpoint would find.
 */
export function reviewScanner(config: PatternSources): HiddenTextScanner {
  return new HiddenTextScanner(reviewPatterns(config), PATTERN_FLAGS);
}

/**
 * One endpoint's hidden-text scanning: its own settings, and each tenant's override of them (every key a
 * tenant sets replaces the endpoint's). Policies are built once per tenant override object (a reload
 * that changes a tenant makes a new one) and share their definition scans when their patterns are the
 * same (the KEPT_SETS pattern sets asked for last). A tenant without an override costs `for` three
 * property reads; with scanning off everywhere it returns undefined, which is what keeps the request path free.
 */
export class HiddenTextGuard {
  readonly settings: HiddenTextConfig;
  readonly #endpoint: string;
  readonly #deps: HiddenTextDeps;
  readonly #scans = new Map<string, DefinitionScans>();
  readonly #common: HiddenTextPolicy | undefined;
  readonly #tenants = new WeakMap<TenantHiddenTextConfig, HiddenTextPolicy | null>();

  constructor(settings: HiddenTextConfig, endpoint: string, deps: HiddenTextDeps = {}) {
    this.settings = settings;
    this.#endpoint = endpoint;
    this.#deps = deps;
    this.#common = this.#policy(settings);
  }

  /** The same deps, other settings (a reload); unchanged settings keep this guard and what it has scanned. */
  with(settings: HiddenTextConfig): HiddenTextGuard {
    return JSON.stringify(settings) === JSON.stringify(this.settings) ? this : new HiddenTextGuard(settings, this.#endpoint, this.#deps);
  }

  /** What scanning does for a tenant's requests here; undefined when it is off for both definitions and results. */
  for(tenant: TenantPolicy): HiddenTextPolicy | undefined {
    const o = tenant.config.guardrails?.hiddenText;
    if (o === undefined) return this.#common;
    let p = this.#tenants.get(o);
    if (p === undefined) {
      const s = this.settings;
      p = this.#policy({ definitions: o.definitions ?? s.definitions, results: o.results ?? s.results, patterns: o.patterns ?? s.patterns, imageHosts: o.imageHosts ?? s.imageHosts }) ?? null;
      this.#tenants.set(o, p);
    }
    return p ?? undefined;
  }

  /** What screens a tenant's definitions here (its policy when scanning of definitions is on): for what is not a list, such as instructions. */
  definitionsFor(tenant: TenantPolicy): HiddenTextPolicy | undefined {
    const p = this.for(tenant);
    return p?.definitions === 'off' ? undefined : p;
  }

  /** Whether a tenant is shown what every tenant without an override is (a modern list may then be cached publicly). */
  sameForAll(tenant: TenantPolicy): boolean {
    return tenant.config.guardrails?.hiddenText === undefined;
  }

  /** How many pattern sets' definition scans are kept for sharing (read by tests). */
  get patternSets(): number {
    return this.#scans.size;
  }

  #policy(s: HiddenTextConfig): HiddenTextPolicy | undefined {
    if (s.definitions === 'off' && s.results === 'off') return undefined;
    const key = JSON.stringify([s.patterns, s.imageHosts]);
    let scans = this.#scans.get(key);
    // Least recently asked first out: a tenant-only reload keeps this guard, so the pattern sets reloads
    // stopped using would otherwise stay for good. A policy built holds its scans, so dropping only ends sharing.
    this.#scans.delete(key);
    this.#scans.set(key, (scans ??= new DefinitionScans(new HiddenTextScanner(s.patterns, PATTERN_FLAGS, s.imageHosts))));
    if (this.#scans.size > KEPT_SETS) this.#scans.delete(this.#scans.keys().next().value!);
    return new HiddenTextPolicy({ definitions: s.definitions, results: s.results, endpoint: this.#endpoint, scans, deps: this.#deps });
  }
}
