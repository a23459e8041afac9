import type { UpstreamInstance, UpstreamPool } from '../upstream/index.js';

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
