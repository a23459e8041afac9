import { clipped } from '../observability/clipped.js';

/** The clientInfo fields the MCP schema defines as strings (Implementation, 2025-11-25); icons and anything else are left out. */
const FIELDS = ['name', 'title', 'version', 'description', 'websiteUrl'] as const;
/** Longer than any real client's name, version or address. */
const MAX = 256;

/**
 * What the gateway keeps of an initialize's clientInfo: the known string fields, each cut to MAX
 * characters (marked `…`). It is logged once and held in the session record (memory or Redis) for
 * the session's life, and the client chooses it whole: as sent, a 4 MB clientInfo would cost a 4 MB
 * log line and 4 MB per session. The gateway only shows it; it never acts on it.
 */
export function keptClientInfo(info: unknown): Record<string, string> | undefined {
  if (info === null || typeof info !== 'object') return undefined;
  const kept: Record<string, string> = {};
  for (const field of FIELDS) {
    const value = (info as Record<string, unknown>)[field];
    if (typeof value === 'string') kept[field] = clipped(value, MAX);
  }
  return kept;
}
