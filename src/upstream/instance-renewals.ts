import type { UpstreamConfig } from '../config/schema.js';
import type { UpstreamClient } from './upstream-client.js';

/**
 * What a new process of an instance is told again of what its predecessor was told: a restarted (or
 * re-initialized) upstream is a new server, which knows no subscription and no logging/setLevel. Without
 * the level, it sent what it chose by default (often warnings and worse) to the sessions that had asked
 * for debug, and a 2026-07-28 standing never set it again (it sets a level once). Settles once each is
 * answered (or failed), within initTimeoutMs, a renewal being part of the restart: the instance is ready
 * only then. Sent without waiting, a remote upstream took the calls that waited for the restart (each a
 * POST of its own) before its setLevel, and ran them at its default level.
 */
export async function renewUpstreamState(client: UpstreamClient, config: UpstreamConfig, uris: readonly string[], level: Record<string, unknown> | undefined): Promise<void> {
  // A 2026-07-28 upstream hears subscriptions on its listen stream, and the level with each request.
  if (client.era === 'modern' || (level === undefined && uris.length === 0)) return;
  const timeoutMs = Math.min(config.requestTimeoutMs, config.initTimeoutMs);
  const o = { timeoutMs, maxTimeoutMs: timeoutMs };
  const renewals = uris.map((uri) => client.request('resources/subscribe', { uri }, o));
  if (level !== undefined) renewals.unshift(client.request('logging/setLevel', level, o));
  await Promise.allSettled(renewals);
}
