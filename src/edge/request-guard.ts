import { isLoopbackHost } from '../config/loopback.js';
import { clipped } from '../observability/clipped.js';

/** "example.com:8080" → "example.com", "[::1]:80" → "[::1]". */
export function hostnameOf(hostHeader: string): string {
  if (hostHeader.startsWith('[')) {
    const end = hostHeader.indexOf(']');
    return end === -1 ? hostHeader : hostHeader.slice(0, end + 1);
  }
  const colon = hostHeader.lastIndexOf(':');
  return (colon === -1 ? hostHeader : hostHeader.slice(0, colon)).toLowerCase();
}

export interface GuardOptions {
  boundToLoopback: boolean;
  allowedOrigins: readonly string[];
  allowedHosts: readonly string[];
}

/**
 * The last Host header let through, and under which options: nearly every request of a gateway carries
 * the same Host, so the check runs once per new value instead of per request. One entry, so a client
 * sending many Host values gains nothing and costs no memory.
 */
/**
 * How much of a refused Host or Origin the refusal quotes: it is also the edge's "request refused" log
 * line, written before authentication, so a header quoted whole (up to Node's 16 KiB limit) made a log
 * line that large per request from anyone who can reach the port.
 */
const QUOTED = 256;

const lastAllowed: { host: string | undefined; options: GuardOptions | undefined } = { host: undefined, options: undefined };

/**
 * DNS-rebinding protection: a browser page on a foreign origin must not reach a gateway on loopback.
 * Returns why a request is refused, or undefined when it may go on.
 */
export function checkHostAndOrigin(o: GuardOptions, host: string | undefined, origin: string | undefined): string | undefined {
  if (o.allowedHosts.length > 0 || o.boundToLoopback) {
    if (!host) return 'missing Host header';
    if (host !== lastAllowed.host || o !== lastAllowed.options) {
      const name = hostnameOf(host);
      // Entries are lower case (config); a host name is case-insensitive, so the header is compared lowered.
      const ok = o.allowedHosts.length > 0 ? o.allowedHosts.includes(name) || o.allowedHosts.includes(host.toLowerCase()) : isLoopbackHost(name);
      if (!ok) return `Host "${clipped(host, QUOTED)}" is not allowed`;
      lastAllowed.host = host;
      lastAllowed.options = o;
    }
  }
  if (origin !== undefined) {
    if (o.allowedOrigins.includes(origin) || o.allowedOrigins.includes('*')) return undefined;
    let originHost: string;
    try {
      originHost = new URL(origin).hostname;
    } catch {
      return `Origin "${clipped(origin, QUOTED)}" is not allowed`;
    }
    // Local tools such as the MCP Inspector run on loopback origins; allow them to a loopback gateway.
    if (!(o.boundToLoopback && o.allowedOrigins.length === 0 && isLoopbackHost(originHost))) return `Origin "${clipped(origin, QUOTED)}" is not allowed`;
  }
  return undefined;
}
