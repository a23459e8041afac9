import type { UpstreamConfig } from '../config/schema.js';
import type { UpstreamClient } from './upstream-client.js';

/**
 * What a new process of an instance is told again of what its predecessor was told: a restarted (or
 * re-initialized) upstream is a new server, which knows no subscription and no logging/setLevel. Without
 * the level, it sent what it chose by default (often warnings and worse) to the sessions that had asked
 * for debug, and a 2026-07-28 standing never set it again (it sets a level once). Sent without waiting,
 * before the instance is ready: on one connection they go ahead of the calls waiting for the restart.
 */
export function renewUpstreamState(client: UpstreamClient, config: UpstreamConfig, uris: readonly string[], level: Record<string, unknown> | undefined): void {
  // A 2026-07-28 upstream hears subscriptions on its listen stream, and the level with each request.
  if (client.era === 'modern') return;
  const o = { timeoutMs: config.requestTimeoutMs, maxTimeoutMs: config.requestTimeoutMs };
  if (level !== undefined) client.request('logging/setLevel', level, o).catch(() => {});
  for (const uri of uris) client.request('resources/subscribe', { uri }, o).catch(() => {});
}
