import type { UpstreamConfig } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import { ModernListener } from './modern-listener.js';
import { ResourceSubscriptions, type SubscriptionLink } from './resource-subscriptions.js';
import type { UpstreamClient } from './upstream-client.js';

/** The instance whose processes are told again (UpstreamInstance): its config, and its requests (resources/subscribe). */
export interface RenewedInstance {
  readonly config: UpstreamConfig;
  request: SubscriptionLink['request'];
}

/**
 * What the sessions told an instance that outlives its process: their resource subscriptions (a modern
 * upstream hears them on its listen stream, reopened while its connection lasts) and the log level.
 */
export class InstanceRenewals {
  /** Resource subscriptions on this instance: URI → the sessions subscribed (see ResourceSubscriptions). */
  readonly subscriptions: ResourceSubscriptions;
  /** A modern upstream's list_changed stream, reopened while its connection lasts. */
  readonly #listener: ModernListener;
  readonly #config: UpstreamConfig;
  /** The params of the last logging/setLevel sent here (a session's, a standing's, or a shared instance's debug). */
  #logLevel: Record<string, unknown> | undefined;

  /** `current`: the instance's client now (none while it is down). */
  constructor(instance: RenewedInstance, logger: Logger, current: () => UpstreamClient | undefined) {
    this.#config = instance.config;
    this.subscriptions = new ResourceSubscriptions({
      request: (method, params, o) => instance.request(method, params, o),
      isModern: () => current()?.era === 'modern',
      relisten: () => {
        const client = current();
        if (client) this.#listener.listen(client);
      },
      upstream: () => instance.config,
    });
    this.#listener = new ModernListener(this.subscriptions, logger, current);
  }

  /** A logging/setLevel is sent: kept for a restart, the level in force though this one fails. */
  setLevel(params: Record<string, unknown> | undefined): void {
    this.#logLevel = params;
  }

  /** Opens a modern client's listen stream (replacing its predecessor's). */
  listen(client: UpstreamClient): void {
    this.#listener.listen(client);
  }

  /** Tells a new process what its predecessor was told (see renewUpstreamState). */
  renew(client: UpstreamClient): Promise<void> {
    return renewUpstreamState(client, this.#config, this.subscriptions.uris(), this.#logLevel);
  }
}

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
