import { adminProblems } from './admin-schema.js';
import { formatPath } from './problems.js';
import type { Config } from './schema.js';
import { withTenantShare } from './tenant-share.js';
import { consentProblems } from './vault-schema.js';

/** What became of each named item (upstream, endpoint path, tenant) between two configs. */
export interface NamedChanges {
  added: string[];
  removed: string[];
  changed: string[];
  unchanged: string[];
}

/**
 * What a reload changes: computed from the running config and a validated new one, before anything is
 * touched. `effective` is what the gateway runs afterwards: the new config with every setting that
 * needs a restart left as it was (listed in `restartRequired`, one line each with its path).
 */
export interface ConfigDiff {
  upstreams: NamedChanges;
  /** By path (added ones are served, removed ones end their sessions). Changed: its own settings, or one of its upstreams was replaced. */
  endpoints: NamedChanges;
  tenants: NamedChanges;
  /** Token verification (issuer, keys, key set, audience, algorithms, claims). */
  auth: boolean;
  /** The admin API's token or scope, or the drain grace. */
  admin: boolean;
  restartRequired: string[];
  effective: Config;
  /** Nothing to apply (restart-only differences aside). */
  empty: boolean;
}

/** Sections a running gateway cannot change: listeners, stores and what was built from them at start. */
// logging: pino's child loggers keep the level they were made with; tracing: its SDK is loaded (or not) once, at start.
const RESTART_SECTIONS = ['server', 'session', 'store', 'metrics', 'logging', 'tracing', 'modern', 'vault', 'pinning', 'audit'] as const;
/** Parts of auth the edge published at start (RFC 9728 metadata) or built its routes around. */
const RESTART_AUTH = ['mode', 'authorizationServers', 'scopesSupported'] as const;
const RESTART_ADMIN = ['enabled', 'host', 'port', 'watchConfig', 'maxConnections'] as const;

/** Deep equality of plain config data (key order does not matter, array order does). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((v, i) => sameValue(v, (b as unknown[])[i]));
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

function named<T>(before: readonly T[], after: readonly T[], key: (t: T) => string, same: (a: T, b: T) => boolean): NamedChanges {
  const old = new Map(before.map((t) => [key(t), t]));
  const out: NamedChanges = { added: [], removed: [], changed: [], unchanged: [] };
  for (const t of after) {
    const o = old.get(key(t));
    if (o === undefined) out.added.push(key(t));
    else (same(o, t) ? out.unchanged : out.changed).push(key(t));
  }
  const now = new Set(after.map(key));
  out.removed = [...old.keys()].filter((k) => !now.has(k));
  return out;
}

function pick<T extends object, K extends keyof T>(o: T, keys: readonly K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((k) => [k, o[k]])) as Pick<T, K>;
}

function omit<T extends object, K extends keyof T>(o: T, keys: readonly K[]): Omit<T, K> {
  const out = { ...o };
  for (const k of keys) delete out[k];
  return out;
}

function restartSections(current: Config, next: Config, restart: string[]): Config {
  const eff: Config = { ...next };
  for (const s of RESTART_SECTIONS) {
    if (sameValue(current[s], next[s])) continue;
    restart.push(`${s}: changes need a restart; left as they were`);
    (eff as Record<string, unknown>)[s] = current[s];
  }
  for (const k of RESTART_AUTH) if (!sameValue(current.auth[k], next.auth[k])) restart.push(`auth.${k}: changes need a restart; left as it was`);
  for (const k of RESTART_ADMIN) if (!sameValue(current.admin[k], next.admin[k])) restart.push(`admin.${k}: changes need a restart; left as it was`);
  // A file that changes the mode wrote the rest of auth for the other mode (jwt without an issuer, when
  // written for none, would take any issuer's token its keys verify): all of auth waits for the restart.
  eff.auth = next.auth.mode === current.auth.mode ? { ...next.auth, ...pick(current.auth, RESTART_AUTH) } : current.auth;
  if (eff.auth === current.auth && !sameValue(omit(current.auth, RESTART_AUTH), omit(next.auth, RESTART_AUTH))) restart.push('auth: the file changes auth.mode, so none of its auth settings apply before a restart; left as they were');
  eff.admin = { ...next.admin, ...pick(current.admin, RESTART_ADMIN) };
  // The new file was checked with its own admin address, but the listener keeps its old one until a
  // restart: a file that turns the API off (or moves it to loopback) and drops its token in the same
  // edit must not leave a listener off loopback open to every caller. Its credentials stay as they were.
  if (adminProblems(eff).length > 0) {
    restart.push(`admin.token: the admin API keeps listening on ${current.admin.host} until a restart, where it must authenticate its callers; its token was kept`);
    eff.admin = { ...eff.admin, token: current.admin.token, tokenFile: current.admin.tokenFile };
  }
  keepAnonymous(current, next, eff, restart);
  return eff;
}

/**
 * auth.mode none kept until a restart while the file turns jwt on: every request is still the tenant
 * "anonymous", which a file written for jwt has no reason to name, and an anonymous tenant nobody names
 * may do everything (policy.ts). A local caller limited to a few tools would get them all until the
 * restart: the anonymous tenant in force stays as it was.
 */
function keepAnonymous(current: Config, next: Config, eff: Config, restart: string[]): void {
  if (eff.auth.mode !== 'none' || next.auth.mode === 'none' || next.tenants.some((t) => t.name === 'anonymous')) return;
  const kept = current.tenants.find((t) => t.name === 'anonymous');
  if (!kept) return; // allowed everything before too
  eff.tenants = [...next.tenants, kept];
  restart.push('tenants: "anonymous" is every caller while auth.mode stays none; its rules are kept as they were until a restart');
}

const pinMode = (c: Config, u: Config['upstreams'][number]) => u.pinning ?? c.pinning.mode;

/**
 * Tool pinning's checks (and their store) are built at start only when some upstream is pinned: with
 * none built, an upstream the new file pins would be listed as pinned while nothing checks its tools
 * (a rug pull passing under a config that says withhold). Such an upstream keeps pinning off until a restart.
 */
function pinningOff(current: Config, eff: Config, restart: string[]): void {
  eff.upstreams = eff.upstreams.map((u, i) => {
    if (pinMode(eff, u) === 'off') return u;
    restart.push(`upstreams[${i}].pinning: tool pinning was off for every upstream at start; turning it on for "${u.name}" needs a restart; left off`);
    const before = current.upstreams.find((c) => c.name === u.name);
    return { ...u, pinning: before && pinMode(current, before) === 'off' ? before.pinning : 'off' };
  });
}

/**
 * The diff between the running config and a validated new one (pure: nothing is started or stopped).
 * `pinsBuilt`: whether the gateway runs tool pinning's checks (default: some upstream of `current` is pinned).
 */
export function diffConfig(current: Config, next: Config, pinsBuilt = current.upstreams.some((u) => pinMode(current, u) !== 'off')): ConfigDiff {
  const restartRequired: string[] = [];
  const effective = restartSections(current, next, restartRequired);
  if (!pinsBuilt) pinningOff(current, effective, restartRequired);
  // An upstream is compared as its pool runs it: the tenants reaching it can change its per-tenant share.
  const upstreams = named(current.upstreams, effective.upstreams, (u) => u.name, (a, b) => sameValue(withTenantShare(current, a), withTenantShare(effective, b)));
  const replaced = new Set(upstreams.changed);
  const endpoints = named(current.endpoints, effective.endpoints, (e) => e.path, (a, b) => sameValue(a, b) && !b.upstreams.some((u) => replaced.has(u)));
  const tenants = named(current.tenants, effective.tenants, (t) => t.name, sameValue);
  const auth = !sameValue(omit(current.auth, RESTART_AUTH), omit(effective.auth, RESTART_AUTH));
  const admin = !sameValue(current.admin, effective.admin);
  const moved = (c: NamedChanges) => c.added.length + c.removed.length + c.changed.length > 0;
  const empty = !moved(upstreams) && !moved(endpoints) && !moved(tenants) && !auth && !admin;
  return { upstreams, endpoints, tenants, auth, admin, restartRequired, effective, empty };
}

/**
 * What the config a reload would put in force breaks, though the file is valid: a user-oauth upstream added
 * with the vault.key, server.publicUrl or auth.mode jwt it needs, which wait for a restart. Applied, the
 * upstream failed every user's call until then; a start would refuse that config, so the reload is refused.
 */
export function effectiveProblems(diff: ConfigDiff): string[] {
  return consentProblems(diff.effective).map((p) => `${formatPath(p.path)}: ${p.message}; the file sets it, but vault, server and auth.mode changes take effect at a restart: restart the gateway to apply this file`);
}
