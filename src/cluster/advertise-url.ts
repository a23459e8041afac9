import { networkInterfaces } from 'node:os';

/**
 * The URL other replicas reach this one at: `configured` when set; else http://<host>:<port>, the host
 * being POD_IP (the chart sets it from the downward API), else the listen host when it is one concrete
 * address, else the first non-internal IPv4 of this machine, else loopback (one machine, tests).
 */
export function advertiseUrl(configured: string | undefined, listenHost: string, port: number, env: NodeJS.ProcessEnv = process.env): string {
  if (configured) return configured.replace(/\/+$/, '');
  const host = env.POD_IP?.trim() || (isConcrete(listenHost) ? listenHost : undefined) || firstExternalIPv4() || '127.0.0.1';
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** A listen host that names one address (not a wildcard, not a name that may resolve to several). */
function isConcrete(host: string): boolean {
  return host !== '0.0.0.0' && host !== '::' && host !== '' && host !== 'localhost';
}

function firstExternalIPv4(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}
