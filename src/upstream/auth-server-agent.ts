import { Agent } from 'undici';
import type { UpstreamConfig } from '../config/schema.js';

/** The http defaults of the upstream schema, for a stdio upstream (which has no `http` section). */
const STDIO_DEFAULTS = { connectTimeoutMs: 10_000, headersTimeoutMs: 30_000, bodyTimeoutMs: 60_000, maxConnections: 64, keepAliveTimeoutMs: 30_000 };

/**
 * The connections from the gateway to an upstream's authorization server (token exchange, consent,
 * refresh): a remote upstream's own http timeouts, or the defaults for a stdio one.
 */
export function authServerAgent(u: UpstreamConfig): Agent {
  const http = authServerHttp(u);
  return new Agent({
    connect: { timeout: http.connectTimeoutMs },
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
