import { SESSION_PROTOCOL_VERSIONS } from '../jsonrpc/protocol-revisions.js';

/** Versions the gateway speaks to its clients, newest first: the same list it speaks to its upstreams. */
export const SUPPORTED_PROTOCOL_VERSIONS = SESSION_PROTOCOL_VERSIONS;
export const LATEST_PROTOCOL_VERSION = SUPPORTED_PROTOCOL_VERSIONS[0];

/** The client's version when we support it, else our latest (the client then decides whether to go on). */
export function negotiateVersion(requested: unknown): string {
  return typeof requested === 'string' && (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
}

export function isSupportedVersion(v: string): boolean {
  return (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(v);
}
