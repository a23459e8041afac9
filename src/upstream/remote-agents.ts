import { Agent, type Dispatcher } from 'undici';
import type { RemoteUpstreamConfig } from '../config/schema.js';

/**
 * Where a remote link's HTTP requests go. `requests`: every POST, resume and DELETE, at most
 * http.maxConnections at once. `streams`: the one stream each instance keeps open for as long as it lives
 * (the standalone GET stream, an HTTP+SSE stream, a 2026-07-28 subscriptions/listen), as many as there are
 * instances. In one pool those streams took the connections calls need: with as many instances as
 * maxConnections (64 per-session sessions with the defaults, or pool.size: 64) every connection was held by
 * a stream that never ends, and every call (an HTTP+SSE instance's initialize too) waited for ever.
 */
export interface RemoteDispatchers {
  readonly requests: Dispatcher;
  readonly streams: Dispatcher;
}

/** A dispatcher alone serves both (a link built by hand, as in tests). */
export function dispatchersOf(d: Dispatcher | RemoteDispatchers): RemoteDispatchers {
  return 'dispatch' in d ? { requests: d, streams: d } : d;
}

/** The connection pools of one remote upstream (or of one user's links to it: see PerUserRemotes). */
export class RemoteAgents implements RemoteDispatchers {
  readonly requests: Agent;
  readonly streams: Agent;

  constructor(u: RemoteUpstreamConfig) {
    const common = { connect: { timeout: u.http.connectTimeoutMs }, keepAliveTimeout: u.http.keepAliveTimeoutMs, headersTimeout: u.http.headersTimeoutMs };
    this.requests = new Agent({ ...common, connections: u.http.maxConnections });
    // Unbounded here: one stream per instance, and the instances are bounded (pool.size, pool.max, users).
    this.streams = new Agent(common);
  }

  async close(): Promise<void> {
    await Promise.all([this.requests.close().catch(() => {}), this.streams.close().catch(() => {})]);
  }
}
