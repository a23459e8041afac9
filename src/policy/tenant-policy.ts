import type { RuleSetConfig, TenantConfig } from '../config/schema.js';
import type { CatalogueKind, Decision } from './decision.js';
import { globMatch } from './glob.js';
import { ArgumentRules } from './argument-rules.js';
import { ConfirmRules } from './confirm-rules.js';
import { coversAllUnder, mayMatchUnder } from './upstream-reach.js';
import { UPSTREAM_NAME } from '../config/upstream-schema.js';
import { filePath, matchForm, normalizeEscapes, separatedTemplate, templateProblem, uriProblem, type UriProblem } from './normalize-uri.js';

/** A resource URI the rules cannot judge as written: refused before any pattern is consulted. */
const ABNORMAL: Record<UriProblem, Decision> = {
  'not-normal': Object.freeze({ allowed: false, rule: 'resources: URI not in normal form', reason: 'not_allowed' as const }),
  ambiguous: Object.freeze({ allowed: false, rule: 'resources: URI a server may read as another (an escaped separator, a backslash, an empty segment, a NUL, a fragment with a dot-segment)', reason: 'not_allowed' as const }),
};

/**
 * Whether a tool's or prompt's bare name reads as the prefixed name of an upstream other than the one
 * whose alias (`<upstream>__<name>`) it has: its first "__" follows what could be another upstream's name.
 */
function readsAsOthers(name: string, alias: string): boolean {
  const split = name.indexOf('__');
  if (split <= 0) return false;
  const head = name.slice(0, split);
  return head !== alias.slice(0, alias.length - name.length - 2) && UPSTREAM_NAME.test(head);
}

/** Rules with their decisions built once: a call that is allowed allocates nothing here. */
interface CompiledRules {
  allow: Array<{ match: string; scopes: string[]; rule: string; granted: Decision }>;
  deny: Array<{ match: string; denied: Decision }>;
  none: Decision;
}

/**
 * A resource pattern as URIs are compared (matchForm): escapes in upper-case hex, and characters outside
 * URI syntax escaped, so `notes://x/sécret/*` and `notes://x/s%c3%a9cret/*` match the same URIs.
 */
const resourcePattern = (p: string) => matchForm(normalizeEscapes(p));

function compile(kind: CatalogueKind, r: RuleSetConfig): CompiledRules {
  const form = kind === 'resource' ? resourcePattern : (p: string) => p;
  return {
    allow: r.allow.map((a) => {
      const { match, scopes } = typeof a === 'string' ? { match: a, scopes: [] } : a;
      const rule = `${kind}s.allow:${match}`;
      return { match: form(match), scopes, rule, granted: Object.freeze({ allowed: true, rule, reason: 'allowed' as const }) };
    }),
    deny: r.deny.map((match) => ({ match: form(match), denied: Object.freeze({ allowed: false, rule: `${kind}s.deny:${match}`, reason: 'deny_rule' as const }) })),
    none: Object.freeze({ allowed: false, rule: `${kind}s: no allow pattern matches`, reason: 'not_allowed' as const }),
  };
}

/**
 * One tenant's grants. Deny wins; then the first allow pattern that matches decides, and its scopes
 * must all be in the token. Nothing matches: denied. A resource URI not in normal form is denied first.
 */
export class TenantPolicy {
  readonly name: string;
  readonly config: TenantConfig;
  readonly #rules: Record<CatalogueKind, CompiledRules>;
  readonly #scoped: boolean;
  /**
   * Sees the whole catalogue: every kind allowed by "*" without scopes, nothing denied, no argument
   * rules. What such a tenant is shown is the whole catalogue (a modern result may be cached publicly
   * only if every tenant granted the endpoint is such a tenant).
   * Decided once: every modern answer asks.
   */
  readonly filtersNothing: boolean;
  /** Undefined without argument rules: the per-call check is then one property read. */
  readonly argumentRules: ArgumentRules | undefined;
  /** Undefined without confirmation rules: a call then pays one property read for them. */
  readonly confirmRules: ConfirmRules | undefined;

  constructor(config: TenantConfig) {
    this.name = config.name;
    this.config = config;
    this.argumentRules = ArgumentRules.compile(config.arguments);
    this.confirmRules = ConfirmRules.compile(config.confirm);
    this.#rules = { tool: compile('tool', config.tools), resource: compile('resource', config.resources), prompt: compile('prompt', config.prompts) };
    this.#scoped = Object.values(this.#rules).some((r) => r.allow.some((a) => a.scopes.length > 0));
    // The first matching allow rule decides: an unscoped "*" admits everything only if no scoped rule comes before it.
    const openFirst = (r: CompiledRules) => {
      const star = r.allow.findIndex((a) => a.match === '*' && a.scopes.length === 0);
      return star >= 0 && r.allow.slice(0, star).every((a) => a.scopes.length === 0);
    };
    this.filtersNothing = !this.argumentRules && Object.values(this.#rules).every((r) => r.deny.length === 0 && openFirst(r));
  }

  /**
   * Whether any name of this kind can be allowed at all: some allow pattern exists, and no deny takes every
   * name (`deny: ["*"]`, the natural way to take a kind away, allow being "*" by default; deny wins).
   */
  allowsAny(kind: CatalogueKind): boolean {
    const r = this.#rules[kind];
    return r.allow.length > 0 && !r.deny.some((d) => coversAllUnder(d.match, ''));
  }

  /**
   * The endpoint's server capabilities as this tenant is told them (initialize, server/discover): a
   * kind of the catalogue its rules allow nothing of is not offered at all, in either era. Nor are
   * completions when neither prompts nor resources are offered: they complete a prompt's or a resource
   * template's arguments, and there is none to complete (they stayed advertised, for nothing).
   */
  shownCapabilities(caps: Record<string, unknown>): Record<string, unknown> {
    const hidden = (['tool', 'prompt', 'resource'] as const).filter((kind) => !this.allowsAny(kind) && caps[`${kind}s`] !== undefined);
    const offered = (kind: 'prompt' | 'resource') => caps[`${kind}s`] !== undefined && !hidden.includes(kind);
    const noCompletions = caps.completions !== undefined && !offered('prompt') && !offered('resource');
    if (hidden.length === 0 && !noCompletions) return caps;
    const shown = { ...caps };
    for (const kind of hidden) delete shown[`${kind}s`];
    if (noCompletions) delete shown.completions;
    return shown;
  }

  /**
   * Whether this tenant may see anything an upstream offers (`caps`: its declared capabilities): a tool or
   * prompt its patterns can allow under the upstream's name (`prefixed`: the endpoint names them
   * "<upstream>__…"; else any bare name, the prefixed one an alias) that no deny takes all of, or, for
   * resources (URIs name no upstream), any resource at all. Else it is not told of the upstream (its
   * instructions). Scopes are not asked: a step-up may grant them. Errs towards reachable.
   */
  reachesUpstream(upstream: string, prefixed: boolean, caps: Record<string, unknown>): boolean {
    const under = `${upstream}__`;
    const named = (kind: 'tool' | 'prompt') => {
      const { allow, deny } = this.#rules[kind];
      if (deny.some((d) => coversAllUnder(d.match, under) || (!prefixed && coversAllUnder(d.match, '')))) return false;
      return prefixed ? allow.some((a) => mayMatchUnder(a.match, under)) : allow.length > 0;
    };
    const r = this.#rules.resource;
    return (caps.tools !== undefined && named('tool')) || (caps.prompts !== undefined && named('prompt')) || (caps.resources !== undefined && r.allow.length > 0 && !r.deny.some((d) => coversAllUnder(d.match, '')));
  }

  /** Whether any allow rule needs scopes (else no request can ever need a step-up). */
  get hasScopedRules(): boolean {
    return this.#scoped;
  }

  mayUseEndpoint(path: string): boolean {
    return this.config.endpoints.includes('*') || this.config.endpoints.includes(path);
  }

  /**
   * `asked`: the URI must be in normal form, so the patterns see it exactly as the upstream will
   * (normalize-uri.ts): a URI a client names, and one an upstream lists (a list shows only what can be
   * read). `"template"`: a URI template (completion/complete, resources/templates/list), whose written
   * parts must be in normal form. `false`: a tool or prompt name, matched as it is.
   */
  decide(kind: CatalogueKind, name: string, scopes: ReadonlySet<string>, asked: boolean | 'template' = true, alias?: string): Decision {
    const d = this.#decide(kind, name, scopes, asked);
    if (alias === undefined) return kind === 'resource' && asked === true && d.allowed ? this.#pathOnly(name, scopes, d) : d;
    // Two names for one tool (bare, and prefixed on an endpoint showing one upstream unprefixed): a deny
    // of either wins, then a scope the rule matching either first asks and the token lacks (a broader
    // "*" after it, matching the other name, granted the tool to every token), then an allow of either.
    const a = this.#decide(kind, alias, scopes, asked);
    // A bare name that reads as another upstream's prefixed name ("docs__purge", a tool of upstream gh): the
    // allow and scopes it matches were written for that upstream's tools (a deny of it still wins).
    const b = d.reason === 'deny_rule' || d.reason === 'not_allowed' || !readsAsOthers(name, alias) ? d : this.#rules[kind].none;
    // Written out, not looped over [b, a]: every tools/call of such an endpoint comes here.
    if (b.reason === 'deny_rule') return b;
    if (a.reason === 'deny_rule') return a;
    if (b.reason === 'missing_scope') return b;
    if (a.reason === 'missing_scope') return a;
    return a.allowed && !b.allowed ? a : b;
  }

  /**
   * A file URI with an authority or a query, allowed as written, as a server that ignores them reads it: a deny
   * of that path, or a scope its first matching rule asks, wins (`file://h/dir/secret/x` was read past a deny of
   * `file:///dir/secret*`, `file:///etc/shadow?x` past one of `file:///etc/shadow`). Its allow does not grant
   * it: to a server that reads the host, it is another machine's file.
   */
  #pathOnly(uri: string, scopes: ReadonlySet<string>, d: Decision): Decision {
    const path = filePath(uri);
    if (path === undefined) return d;
    const h = this.#decide('resource', path, scopes, true);
    return h.reason === 'deny_rule' || h.reason === 'missing_scope' ? h : d;
  }

  #decide(kind: CatalogueKind, name: string, scopes: ReadonlySet<string>, asked: boolean | 'template'): Decision {
    const rules = this.#rules[kind];
    const problem = asked === false || kind !== 'resource' ? undefined : asked === 'template' ? templateProblem(name) : uriProblem(name);
    if (problem) return ABNORMAL[problem];
    // A URI is compared in matchForm: its IRI and percent-encoded spellings are one text to the patterns.
    if (kind === 'resource' && asked !== false) name = matchForm(name);
    // A template is matched as written and as it expands (separatedTemplate): a deny of either wins, then an allow of either.
    const also = asked === 'template' && kind === 'resource' ? separatedTemplate(name) : undefined;
    // A URI's fragment is the client's (RFC 3986 §3.5; uriProblem refused one that climbs): the resource is the
    // URI without it, which the rules judge, and a deny written with the fragment still wins.
    const hash = asked === true && kind === 'resource' ? name.indexOf('#') : -1;
    const whole = hash < 0 ? undefined : name;
    if (hash >= 0) name = name.slice(0, hash);
    for (const d of rules.deny) if (globMatch(d.match, name) || (also !== undefined && globMatch(d.match, also)) || (whole !== undefined && globMatch(d.match, whole))) return d.denied;
    for (const a of rules.allow) {
      if (!globMatch(a.match, name) && (also === undefined || !globMatch(a.match, also))) continue;
      // The first match decides: a broader rule after it (["github__delete_*" with scopes, "github__*"])
      // must not grant what the narrower one asks scopes for.
      if (a.scopes.length === 0) return a.granted;
      const lacking = a.scopes.filter((s) => !scopes.has(s));
      if (lacking.length === 0) return a.granted;
      return { allowed: false, rule: `${a.rule} (missing scope ${lacking.join(' ')})`, reason: 'missing_scope', missingScopes: lacking };
    }
    return rules.none;
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
  confirm: [],
}) as TenantConfig;
