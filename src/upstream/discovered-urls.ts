import { BlockList, isIP } from 'node:net';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
/** Link-local: no authorization server lives there, the cloud metadata service (169.254.169.254) does. */
const LINK_LOCAL = new BlockList();
LINK_LOCAL.addSubnet('169.254.0.0', 16, 'ipv4');
LINK_LOCAL.addSubnet('fe80::', 10, 'ipv6');

/** A URL's host as an IP address (IPv6 unbracketed; an IPv4-mapped one is checked as IPv4 by BlockList), if it is one. */
function addressOf(hostname: string): { address: string; type: 'ipv4' | 'ipv6' } | undefined {
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  const family = isIP(host);
  return family === 0 ? undefined : { address: host, type: family === 4 ? 'ipv4' : 'ipv6' };
}

/** Whether a resolved address (no brackets) is link-local: see LINK_LOCAL. */
export function isLinkLocal(address: string): boolean {
  const ip = addressOf(address);
  return ip !== undefined && LINK_LOCAL.check(ip.address, ip.type);
}

function isLoopback(hostname: string): boolean {
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) return true;
  const ip = addressOf(hostname);
  return ip !== undefined && LOOPBACK.check(ip.address, ip.type);
}

/**
 * Why the gateway will not use `url`, which discovery found rather than the operator wrote (the authorization
 * server an upstream's RFC 9728 metadata names, the endpoints that server's RFC 8414 metadata lists), or
 * undefined when it may. The token endpoint gets the gateway's client secret and users' authorization
 * codes, the authorization endpoint users' browsers: only https, plain http only on a loopback host or on
 * an origin the operator configured with http (`operatorOrigins`: the upstream's, the authorization
 * server's), never a link-local address. Another origin than the issuer's is fine (RFC 8414 allows it).
 */
export function discoveredUrlProblem(url: string, operatorOrigins: readonly string[]): string | undefined {
  if (!URL.canParse(url)) return 'is not a URL';
  const u = new URL(url);
  // A host name is checked where it is resolved, at each connection (authServerAgent).
  if (isLinkLocal(u.hostname)) return 'is at a link-local address (169.254.0.0/16, fe80::/10: where cloud metadata services answer), never an authorization server';
  if (u.protocol === 'https:') return undefined;
  if (u.protocol !== 'http:') return `uses ${u.protocol}, not https`;
  if (isLoopback(u.hostname) || operatorOrigins.includes(u.origin)) return undefined;
  return "is plain http on a host that is not loopback, which would carry the gateway's client secret and users' codes in clear: only https is used (http only on loopback, or on an origin configured with http)";
}

/** The URL `u` without a trailing slash, for comparing identifiers (RFC 9728 §3.3, RFC 8414 §3.3). */
export function withoutTrailingSlash(u: string): string {
  return u.endsWith('/') ? u.slice(0, -1) : u;
}
