import { clipped } from './clipped.js';

/** The Implementation fields the MCP schema defines as strings (2025-11-25); icons and anything else are left out. */
const FIELDS = ['name', 'title', 'version', 'description', 'websiteUrl'] as const;
/** Longer than any real client's or server's name, version or address. */
const MAX = 256;

/**
 * What the gateway keeps, to log or hold, of an Implementation the other side chose whole (a client's
 * clientInfo, an upstream's serverInfo): the known string fields, each cut to MAX characters (marked `…`).
 * As sent, a 4 MB one would be a 4 MB log line (an upstream's on every start and restart of an instance)
 * and, for a client, 4 MB per session record. The gateway only shows it; it never acts on it.
 */
export function keptImplementationInfo(info: unknown): Record<string, string> | undefined {
  if (info === null || typeof info !== 'object') return undefined;
  const kept: Record<string, string> = {};
  for (const field of FIELDS) {
    const value = (info as Record<string, unknown>)[field];
    if (typeof value === 'string') kept[field] = clipped(value, MAX);
  }
  return kept;
}
