/** The addresses that take a port on every interface: a listener there clashes with any other on its port. */
const WILDCARDS = new Set(['0.0.0.0', '::', '[::]', '']);

interface Listener {
  path: string[];
  host: string;
  port: number;
  enabled: boolean;
}

/**
 * A listener address written in brackets, and listeners of the gateway (MCP, metrics, admin) given one
 * port on overlapping addresses: the second fails at start with "address already in use", after the upstreams have started; check-config says so
 * first. Port 0 (the system picks one) never clashes, nor do two distinct specific addresses.
 */
export function listenerProblems(cfg: {
  server: { host: string; port: number };
  metrics: { enabled: boolean; host: string; port: number };
  admin: { enabled: boolean; host: string; port: number };
}): Array<{ path: string[]; message: string }> {
  const listeners: Listener[] = [
    { path: ['server', 'port'], host: cfg.server.host, port: cfg.server.port, enabled: true },
    { path: ['metrics', 'port'], host: cfg.metrics.host, port: cfg.metrics.port, enabled: cfg.metrics.enabled },
    { path: ['admin', 'port'], host: cfg.admin.host, port: cfg.admin.port, enabled: cfg.admin.enabled },
  ].filter((l) => l.enabled);
  const problems: Array<{ path: string[]; message: string }> = [];
  // "[::1]" is a URL's way of writing an address: listen() takes it for a host name, finds none, and the
  // gateway failed only after its upstreams had started, where check-config had said ok.
  for (const l of listeners) {
    const bare = /^\[(.*)\]$/.exec(l.host)?.[1];
    if (bare !== undefined) problems.push({ path: [l.path[0]!, 'host'], message: `write an IPv6 address without brackets (${JSON.stringify(bare)}): a listener cannot resolve ${JSON.stringify(l.host)}` });
  }
  const bound = listeners.filter((l) => l.port !== 0);
  bound.forEach((l, i) => {
    const other = bound.slice(0, i).find((o) => o.port === l.port && (o.host === l.host || WILDCARDS.has(o.host) || WILDCARDS.has(l.host)));
    if (other) problems.push({ path: l.path, message: `${l.port} is also ${other.path.join('.')} on ${other.host === l.host ? 'the same address' : 'an overlapping address'} (${other.host} and ${l.host}): each listener needs a port of its own` });
  });
  return problems;
}
