import type { UpstreamCaller, UpstreamIdentity, UpstreamInstance, UpstreamPool } from '../upstream/index.js';
import { screenInstructions, type DefinitionScreen } from './definition-screen.js';

/** What the gateway advertises for an endpoint: the union of what its upstreams really offer. */
export function mergeCapabilities(pools: readonly UpstreamPool[], leases: ReadonlyMap<string, UpstreamInstance>): Record<string, unknown> {
  const caps: Record<string, unknown> = {};
  for (const p of pools) {
    const c = (leases.get(p.name)?.identity ?? p.identity)?.capabilities;
    // Not yet known (the upstream has not started): assume the catalogue kinds, so a client that
    // connects during a restart still asks for them once the upstream is back.
    const known = c ?? { tools: {}, prompts: {}, resources: {} };
    if (known.tools) caps.tools = { listChanged: true };
    if (known.prompts) caps.prompts = { listChanged: true };
    if (known.resources) caps.resources = { ...(caps.resources as object), listChanged: true, ...(known.resources.subscribe ? { subscribe: true } : {}) };
    if (known.logging) caps.logging = {};
    if (known.completions) caps.completions = {};
  }
  return caps;
}

/** Whether the caller's tenant may see anything of an upstream that declares `caps` (TenantPolicy.reachesUpstream). */
export type Reach = (upstream: string, caps: Record<string, unknown>) => boolean;

/** A tenant's policy as the router asks it (src/policy/tenant-policy.ts; the router imports no policy). */
export interface UpstreamReach {
  reachesUpstream(upstream: string, prefixed: boolean, caps: Record<string, unknown>): boolean;
}

/**
 * The instructions the endpoint's upstreams give this caller, each from an instance that serves it. The
 * last identity of a per-user or per-tenant pool (or a per-session one) is whichever instance became
 * ready last, another user's or tenant's, whose instructions may name them ("connected as alice@…"):
 * an upstream with no instance running for the caller yet gives none.
 */
export function mergeInstructions(pools: readonly UpstreamPool[], leases: ReadonlyMap<string, UpstreamInstance>, caller: UpstreamCaller, screen?: DefinitionScreen, reach?: Reach): string | undefined {
  const parts: string[] = [];
  for (const p of pools) {
    const identity = identityFor(p, leases, caller);
    // An upstream the caller's policy lets it see nothing of: not even its name, nor model-facing text from it.
    if (identity && reach && !reach(p.name, identity.capabilities ?? {})) continue;
    const own = identity?.instructions;
    // Screened (hidden-text scanning of definitions): a host reads them as its system prompt.
    const text = own && screen ? screenInstructions(screen, p.name, own) : own;
    if (text) parts.push(pools.length > 1 ? `## ${p.name}\n${text}` : text);
  }
  return parts.length > 0 ? parts.join('\n\n') : undefined;
}

function identityFor(p: UpstreamPool, leases: ReadonlyMap<string, UpstreamInstance>, caller: UpstreamCaller): UpstreamIdentity | undefined {
  const leased = leases.get(p.name);
  if (leased) return leased.identity;
  if (p.config.sharing === 'shared') return p.identity;
  for (const inst of p.instances) if (inst.identity && p.serves(caller, inst)) return inst.identity;
  return undefined;
}
