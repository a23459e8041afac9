import type { Config, UpstreamConfig } from './schema.js';

/** How many configured tenants are granted an endpoint that exposes the upstream. */
export function tenantsReaching(config: Config, upstream: string): number {
  const paths = new Set(config.endpoints.filter((e) => e.upstreams.includes(upstream)).map((e) => e.path));
  return config.tenants.filter((t) => t.endpoints.includes('*') || t.endpoints.some((p) => paths.has(p))).length;
}

/**
 * The upstream as the pool should run it. A per-session pool that several tenants reach gets a default
 * share of `max - 1` per tenant when none is configured: secure by default, one tenant can then never
 * hold every instance and lock the others out (an operator who wants other numbers sets perTenantMax).
 * A pool only one tenant can reach keeps all of it.
 */
export function withTenantShare(config: Config, upstream: UpstreamConfig): UpstreamConfig {
  const pool = upstream.pool;
  if (upstream.sharing !== 'per-session' || pool.perTenantMax !== undefined || pool.max < 2) return upstream;
  if (tenantsReaching(config, upstream.name) < 2) return upstream;
  return { ...upstream, pool: { ...pool, perTenantMax: pool.max - 1 } };
}
