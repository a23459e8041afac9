import type { Config, StdioUpstreamConfig } from './schema.js';

/** How a stdio upstream shares the gateway's network, or undefined when it has a network of its own. */
function sharedNetwork(u: StdioUpstreamConfig): string | undefined {
  if (u.sandbox === 'none') return 'sandbox none';
  if (u.sandbox.type === 'limits') return 'sandbox limits';
  return u.sandbox.network === true ? 'bubblewrap with network: true' : undefined;
}

/**
 * What a stdio server that shares the gateway's network namespace (sandbox none or limits, or bubblewrap
 * with network: true) can reach on loopback: an admin API that lets in every local caller, or whose token
 * it may read from a file (none and limits see the gateway's filesystem), and, with client authentication
 * off, the gateway's own endpoints as the anonymous tenant, and through them the other upstreams with
 * their credentials. All valid, and fine for servers one trusts: said, so that it is a choice.
 */
export function stdioReachWarnings(cfg: Config): string[] {
  const sharing = cfg.upstreams.flatMap((u) => {
    const how = u.transport === 'stdio' ? sharedNetwork(u) : undefined;
    return how ? [{ name: u.name, how, seesFiles: how !== 'bubblewrap with network: true' }] : [];
  });
  if (sharing.length === 0) return [];
  const named = (list: typeof sharing) => `stdio upstream${list.length === 1 ? '' : 's'} ${list.map((s) => `"${s.name}" (${s.how})`).join(', ')} share${list.length === 1 ? 's' : ''}`;
  const fix = 'run servers you do not trust in bubblewrap without network (the default sandbox)';
  const out: string[] = [];
  const a = cfg.admin;
  if (a.enabled && a.token === undefined && a.tokenFile === undefined && cfg.auth.mode !== 'jwt') {
    out.push(`admin: the admin API (${a.host}:${a.port}) lets in every local caller, and ${named(sharing)} the gateway's network: such a server can approve its own pending tool pins, end sessions and reload; set admin.token as \${ENV}, or ${fix}`);
  }
  const reading = sharing.filter((s) => s.seesFiles);
  if (a.enabled && a.tokenFile !== undefined && reading.length > 0) {
    out.push(`admin.tokenFile: ${named(reading)} the gateway's network and filesystem: one that can read ${a.tokenFile} (as the gateway's user, or anyone when the file is world-readable, as a mounted Kubernetes Secret is by default) can use the admin API; prefer admin.token as \${ENV}, or ${fix}`);
  }
  const others = (s: { name: string }) => cfg.upstreams.some((u) => u.name !== s.name);
  const reachers = sharing.filter(others);
  if (cfg.auth.mode === 'none' && reachers.length > 0) {
    out.push(`auth.mode: none, and ${named(reachers)} the gateway's network: such a server can call the gateway's endpoints (${cfg.server.host}:${cfg.server.port}) as the anonymous tenant, and through them the other upstreams' tools with their credentials; ${fix}`);
  }
  return out;
}
