import { lookup as dnsLookup } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent } from 'undici';
import type { UpstreamConfig } from '../config/schema.js';
import { GatewayError } from '../errors.js';
import { isLinkLocal } from './discovered-urls.js';

/** The http defaults of the upstream schema, for a stdio upstream (which has no `http` section). */
const STDIO_DEFAULTS = { connectTimeoutMs: 10_000, headersTimeoutMs: 30_000, bodyTimeoutMs: 60_000, maxConnections: 64, keepAliveTimeoutMs: 30_000 };

/**
 * The connections from the gateway to an upstream's authorization server (token exchange, consent,
 * refresh): a remote upstream's own http timeouts, or the defaults for a stdio one. `resolve`: how host
 * names are looked up (dns.lookup; a test's own), checked by refusingLinkLocal.
 */
export function authServerAgent(u: UpstreamConfig, resolve: LookupFunction = dnsLookup): Agent {
  const http = authServerHttp(u);
  return new Agent({
    connect: { timeout: http.connectTimeoutMs, lookup: refusingLinkLocal(u, resolve) },
    connections: http.maxConnections,
    keepAliveTimeout: http.keepAliveTimeoutMs,
    headersTimeout: http.headersTimeoutMs,
    bodyTimeout: http.bodyTimeoutMs,
  });
}

/** The http settings of the connections to an upstream's authorization server (bodyTimeoutMs: how long its answer may take to read in all). */
export function authServerHttp(u: UpstreamConfig): typeof STDIO_DEFAULTS {
  return u.transport === 'stdio' ? STDIO_DEFAULTS : u.http;
}

/**
 * A lookup that refuses a host name discovery found (not one the operator wrote: `operatorHosts`) when it
 * resolves to a link-local address (the cloud metadata service, 169.254.169.254; fe80::/10). Discovery checks
 * a URL's IP literal (discoveredUrlProblem); a name is known only here, at connection time, where the address
 * connected to is the one resolved (a name that resolved elsewhere when it was checked cannot rebind it). The
 * refusal (SWB_UPSTREAM_UNAVAILABLE, details.reason `link-local-destination`) fails the request before any
 * connection: discovery and the token request say it, and the consent's log line gives it as its reason.
 */
function refusingLinkLocal(u: UpstreamConfig, resolve: LookupFunction): LookupFunction {
  const operator = operatorHosts(u);
  return ((hostname: string, options: { all?: boolean }, callback: (err: Error | null, address?: unknown, family?: number) => void) => {
    if (operator.has(hostname.toLowerCase())) return resolve(hostname, options as never, callback as never);
    resolve(hostname, options as never, ((err: Error | null, address: string | Array<{ address: string; family: number }>, family?: number) => {
      if (err) return callback(err);
      const found = Array.isArray(address) ? address.map((a) => a.address) : [address];
      const local = found.find(isLinkLocal);
      if (local === undefined) return callback(null, address, family);
      callback(
        new GatewayError(
          'SWB_UPSTREAM_UNAVAILABLE',
          `the host ${hostname}, found by discovery, resolves to the link-local address ${local} (169.254.0.0/16, fe80::/10: where cloud metadata services answer), never an authorization server; not connected`,
          { upstream: u.name, reason: 'link-local-destination' },
        ),
      );
    }) as never);
  }) as LookupFunction;
}

/** The hosts of the URLs the operator wrote for `u` (its own URL, its auth's servers and endpoints). */
function operatorHosts(u: UpstreamConfig): Set<string> {
  const auth = (u.auth ?? {}) as Record<string, unknown>;
  const urls = [u.transport === 'stdio' ? undefined : u.url, auth.authorizationServer, auth.authorizationEndpoint, auth.tokenEndpoint];
  return new Set(urls.flatMap((v) => (typeof v === 'string' && URL.canParse(v) ? [new URL(v).hostname.toLowerCase()] : [])));
}
