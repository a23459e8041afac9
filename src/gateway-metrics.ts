import type { ConnectionLimits } from './edge/connection-limits.js';
import type { SseHub } from './edge/sse-connection.js';
import type { Gateway, GatewayDeps } from './gateway.js';
import type { Metrics } from './observability/metrics.js';
import type { UpstreamPool } from './upstream/index.js';
import type { Tracing } from './observability/tracing.js';
import { MemoryEventStore, type SessionObserver } from './session/index.js';

/**
 * How the gateway's events reach Prometheus. Composition code (it knows the gateway and the edge), so
 * it sits next to app.ts rather than in observability/, which defines the metrics and imports nothing.
 */
export function metricsObservers(m: Metrics, deps: Partial<GatewayDeps>, tracing?: Tracing): Pick<GatewayDeps, 'observer' | 'pinObserver' | 'redisObserver' | 'hiddenTextObserver' | 'embeddingsObserver'> {
  return {
    observer: deps.observer ?? sessionObserver(m, tracing?.enabled ? tracing : undefined),
    pinObserver: deps.pinObserver ?? { change: (action, upstream) => m.toolPinChanges.inc({ upstream, action }) },
    hiddenTextObserver: deps.hiddenTextObserver ?? { found: (kind, where, action, n) => m.hiddenTextFindings.inc({ kind, where, action }, n) },
    embeddingsObserver: deps.embeddingsObserver ?? { request: (purpose, outcome) => m.toolSearchEmbeddings.inc({ purpose, outcome }) },
    redisObserver: {
      command: (name, seconds, ok) => {
        m.redisDuration.observe({ command: name }, seconds);
        if (!ok) m.redisErrors.inc({ command: name });
      },
      malformed: (channel) => m.clusterMalformed.inc({ channel }),
      forwarded: (via) => m.clusterForwards.inc({ via }),
      untrusted: (reason) => m.clusterUntrustedForwards.inc({ reason }),
    },
  };
}

/**
 * Session events → Prometheus. With tracing, each duration observation keeps the request's trace as
 * its bucket's exemplar (requestDone runs inside the request's span: see the observe stage).
 */
function sessionObserver(m: Metrics, tracing: Tracing | undefined): SessionObserver {
  return {
    sessionOpened: (transport, tenant) => m.sessionsActive.inc({ transport, tenant }),
    sessionClosed: (transport, tenant) => m.sessionsActive.dec({ transport, tenant }),
    // Inside the request's span when tracing is on: its ids become the bucket's exemplar.
    requestDone: tracing ? (r) => m.tally.done(r, tracing.activeIds()) : (r) => m.tally.done(r),
    denied: (reason) => m.policyDenials.inc({ reason }),
    rateLimited: (limit) => m.rateLimited.inc({ limit }),
    confirmation: (tenant, outcome) => m.confirmations.inc({ tenant, outcome }),
    elicitationRefused: (upstream, reason) => m.upstreamElicitationsRefused.inc({ upstream, reason }),
  };
}

/** Gauges read at scrape time (and sandbox uids withheld), and upstream restarts and refused upstream requests as they happen. */
export function observeGateway(m: Metrics, gateway: Gateway, hub: SseHub): void {
  const wire = (pool: UpstreamPool) => {
    pool.on('ready', (_inst: unknown, _id: unknown, restarted: boolean) => {
      if (restarted) m.upstreamRestarts.inc({ upstream: pool.name });
    });
    pool.on('unattributed', (_inst: unknown, method: string) => m.unattributedRequests.inc({ upstream: pool.name, method }));
    pool.on('throttled', (_inst: unknown, status: number) => m.upstreamThrottled.inc({ upstream: pool.name, status: String(status) }));
  };
  for (const pool of gateway.pools.values()) wire(pool);
  gateway.onPool(wire);
  let evicted = 0;
  let cut = 0;
  let answersEvicted = 0;
  const withheld = new Map<string, number>();
  m.onScrape(() => {
    for (const [upstream, n] of gateway.uidsWithheld) {
      if (n > (withheld.get(upstream) ?? 0)) m.sandboxUidsWithheld.inc({ upstream }, n - (withheld.get(upstream) ?? 0));
      withheld.set(upstream, n);
    }
    m.upstreamInstances.reset();
    for (const pool of gateway.pools.values()) countInstances(m, pool, false);
    // A pool a reload replaced or removed runs its processes until its calls end: counted too, marked.
    for (const pool of gateway.draining) countInstances(m, pool, true);
    if (gateway.events instanceof MemoryEventStore) {
      m.sseEventsBuffered.set(gateway.events.buffered);
      if (gateway.events.evicted > evicted) m.sseEventsDropped.inc({ cause: 'evicted' }, gateway.events.evicted - evicted);
      evicted = gateway.events.evicted;
    }
    // Answers kept for a resuming reader and let go by a session's bounds: evicted as the log's events are.
    if (hub.answersEvicted > answersEvicted) m.sseEventsDropped.inc({ cause: 'evicted' }, hub.answersEvicted - answersEvicted);
    answersEvicted = hub.answersEvicted;
    if (hub.cut > cut) m.sseEventsDropped.inc({ cause: 'slow_reader' }, hub.cut - cut);
    cut = hub.cut;
  });
}

/** A pool's instances by state (every state, 0 included); a draining pool's with draining="true". */
function countInstances(m: Metrics, pool: UpstreamPool, draining: boolean): void {
  const counts: Record<string, number> = { starting: 0, ready: 0, backoff: 0, stopped: 0 };
  for (const inst of pool.instances) counts[inst.state] = (counts[inst.state] ?? 0) + 1;
  for (const [state, n] of Object.entries(counts)) m.upstreamInstances.set(draining ? { upstream: pool.name, state, draining: 'true' } : { upstream: pool.name, state }, n);
}

/** Open connections by state, read at scrape time. */
export function observeConnections(m: Metrics, limits: ConnectionLimits): void {
  m.onScrape(() => {
    const c = limits.counts;
    m.connectionsOpen.set({ state: 'authenticated' }, c.authenticated);
    m.connectionsOpen.set({ state: 'unauthenticated' }, c.unauthenticated);
  });
}
