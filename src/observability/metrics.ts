import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type Metric, type OpenMetricsContentType } from 'prom-client';
import { RequestTally } from './request-tally.js';
import { TallyHistogram } from './tally-histogram.js';

const REQUEST_LABELS = ['method', 'endpoint', 'upstream', 'outcome', 'protocol_era'] as const;
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * Every metric the gateway exports, on its own registry. Labels are bounded by configuration (endpoint,
 * upstream, tenant names), by the protocol (method, outcome) or by small enums; never session ids,
 * subjects or arguments.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly sessionsActive = new Gauge({ name: 'switchboard_sessions_active', help: 'Open client sessions', labelNames: ['transport', 'tenant'] as const, registers: [this.registry] });
  /**
   * What every answered request updates: counted in the tally on the request path (with exemplars when
   * tracing is on), read into switchboard_requests_total, switchboard_tool_calls_total and the duration
   * histogram when scraped (request-tally.ts says why).
   */
  readonly tally: RequestTally;
  /** Read from the tally at every scrape: count with `tally.done`, not with these counters' own methods. */
  readonly requests: Counter<(typeof REQUEST_LABELS)[number]>;
  readonly toolCalls: Counter<'tool' | 'outcome'>;
  /** `draining` ("true", else absent): an instance of a pool a reload replaced or removed, finishing its calls. */
  readonly upstreamInstances = new Gauge({ name: 'switchboard_upstream_instances', help: 'Upstream instances by state', labelNames: ['upstream', 'state', 'draining'] as const, registers: [this.registry] });
  readonly upstreamRestarts = new Counter({ name: 'switchboard_upstream_restarts_total', help: 'Upstream instances restarted after a failure', labelNames: ['upstream'] as const, registers: [this.registry] });
  readonly sandboxUidsWithheld = new Counter({
    name: 'switchboard_sandbox_uids_withheld_total',
    help: 'Sandbox user ids withheld from the pool for good (root gateway): an instance exited and the processes running as its uid could not be made sure gone',
    labelNames: ['upstream'] as const,
    registers: [this.registry],
  });
  readonly upstreamThrottled = new Counter({
    name: 'switchboard_upstream_throttled_total',
    help: 'Calls a remote upstream refused as overloaded (HTTP 429, or 503 with Retry-After): SWB_UPSTREAM_THROTTLED, not counted by its circuit; calls after one are deferred until its Retry-After',
    labelNames: ['upstream', 'status'] as const,
    registers: [this.registry],
  });
  readonly unattributedRequests = new Counter({
    name: 'switchboard_unattributed_requests_total',
    help: 'Server-to-client requests (sampling, elicitation, roots) of a shared upstream refused because no single client session owned them: run that upstream per-session',
    labelNames: ['upstream', 'method'] as const,
    registers: [this.registry],
  });
  readonly upstreamElicitationsRefused = new Counter({
    name: 'switchboard_upstream_elicitations_refused_total',
    help: "Upstream elicitations refused and put to no user, by reason: gateway_wording (it claimed the gateway's own voice, as a phishing copy of a confirmation question would), gateway_url (its URL was the gateway's own, as a copy of its consent link would be)",
    labelNames: ['upstream', 'reason'] as const,
    registers: [this.registry],
  });
  readonly policyDenials = new Counter({ name: 'switchboard_policy_denials_total', help: 'Requests denied by tenant policy', labelNames: ['reason'] as const, registers: [this.registry] });
  readonly confirmations = new Counter({
    name: 'switchboard_confirmations_total',
    help: 'Tool calls a confirmation rule asked the user about, by outcome: accepted (forwarded), declined, cancelled, timeout, unsupported (the client cannot be asked)',
    labelNames: ['tenant', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly authTokens = new Counter({
    name: 'switchboard_auth_tokens_total',
    help: 'Bearer tokens presented, by how they were checked: cached (verified before, still within its time) or verified (signature checked now, whatever the outcome)',
    labelNames: ['check'] as const,
    registers: [this.registry],
  });
  readonly authFailures = new Counter({ name: 'switchboard_auth_failures_total', help: 'Requests refused by authentication', labelNames: ['reason'] as const, registers: [this.registry] });
  readonly rateLimited = new Counter({ name: 'switchboard_rate_limited_total', help: 'Requests refused by a limit', labelNames: ['limit'] as const, registers: [this.registry] });
  readonly sseEventsBuffered = new Gauge({ name: 'switchboard_sse_events_buffered', help: 'SSE events held for Last-Event-ID resumption', registers: [this.registry] });
  readonly sseEventsDropped = new Counter({ name: 'switchboard_sse_events_dropped_total', help: 'SSE events evicted from the resumption log before delivery could be confirmed, and slow streams cut', labelNames: ['cause'] as const, registers: [this.registry] });
  readonly redisDuration = new Histogram({ name: 'switchboard_redis_command_duration_seconds', help: 'Redis command latency', labelNames: ['command'] as const, buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1], registers: [this.registry] });
  readonly toolPinChanges = new Counter({
    name: 'switchboard_tool_pin_changes_total',
    help: 'Tool pin events: definitions pinned at first sight, changed ones withheld or passed with a warning, and approvals',
    labelNames: ['upstream', 'action'] as const,
    registers: [this.registry],
  });
  readonly hiddenTextFindings = new Counter({
    name: 'switchboard_hidden_text_findings_total',
    help: 'Fields of definitions (once per definition) and results (per call) holding hidden text, by kind (tag, bidi, invisible, markup, image, pattern), where (definition, result) and the action taken (audit, strip, block)',
    labelNames: ['kind', 'where', 'action'] as const,
    registers: [this.registry],
  });
  readonly toolSearchEmbeddings = new Counter({
    name: 'switchboard_tool_search_embeddings_total',
    help: 'Requests to a tool-search embeddings provider (tools.embeddings), by purpose (catalogue: tool texts; query: one search) and outcome (ok, timeout, unreachable, http, invalid); a search whose query failed ranks by words alone',
    labelNames: ['purpose', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly connectionsRefused = new Counter({
    name: 'switchboard_connections_refused_total',
    help: 'Client connections refused or cut at the edge: over max_connections, unauthenticated (oldest idle evicted), body_idle, request_timeout (headers or body not in by their deadline: 408), descriptor exhaustion (emfile)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly httpRefusals = new Counter({
    name: 'switchboard_http_refusals_total',
    help: 'Requests the MCP listener refused at HTTP level before a session or the request pipeline answered them (malformed JSON, invalid JSON-RPC, unknown session, oversized body, wrong media type, auth, rate), by HTTP status and JSON-RPC error code',
    labelNames: ['status', 'code'] as const,
    registers: [this.registry],
  });
  readonly connectionsOpen = new Gauge({ name: 'switchboard_connections_open', help: 'Open client connections, by whether one of their requests was authenticated', labelNames: ['state'] as const, registers: [this.registry] });
  readonly configReloads = new Counter({
    name: 'switchboard_config_reloads_total',
    help: 'Config reloads (SIGHUP, file watch, admin API) by result: applied, unchanged, invalid (nothing changed), failed',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly devKeyExposed = new Gauge({
    name: 'switchboard_auth_development_key_exposed',
    help: '1 while auth.keys, or the key set last fetched from auth.jwksUrl, trusts the published development key (deploy/dev-keys, whose private half is public) and the gateway can be reached beyond loopback (server.host, server.publicUrl, or an enabled admin.host): anyone can sign tokens it accepts',
    registers: [this.registry],
  });
  readonly configWatchUp = new Gauge({ name: 'switchboard_config_watch_up', help: 'With admin.watchConfig: 1 while the config file (and each auth.keys file) is watched, 0 while a watch is down (its directory gone or the watcher failed; retried): edits are not applied meanwhile', registers: [this.registry] });
  readonly clusterMalformed = new Counter({ name: 'switchboard_cluster_malformed_messages_total', help: 'Messages on a cluster channel (a replica inbox, the change bus) that were not the gateway\'s own, ignored', labelNames: ['channel'] as const, registers: [this.registry] });
  readonly clusterForwards = new Counter({ name: 'switchboard_cluster_forwards_total', help: 'Requests forwarded to the replica that owns their session, by how: http (replica to replica), redis (the tunnel: an owner without an advertised URL, or unreachable over HTTP)', labelNames: ['via'] as const, registers: [this.registry] });
  readonly clusterUntrustedForwards = new Counter({ name: 'switchboard_cluster_untrusted_forwards_total', help: 'Requests that claimed to be forwarded by a replica but whose signature did not verify, or was believed already (served as ordinary client requests), by reason', labelNames: ['reason'] as const, registers: [this.registry] });
  readonly consentUnavailable = new Counter({
    name: 'switchboard_consent_unavailable_total',
    help: 'Consent links opened (/oauth/start) that could not send the browser on, by reason: store (503: the sign-in could not be recorded, pending consent records full or their store failing), authorization-server (502: its metadata could not be read); the log says why',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly consentOtherUser = new Counter({
    name: 'switchboard_consent_other_user_total',
    help: "With vault.verifyUser: consent links refused (403) because the browser signed in to the gateway as another user than the one the link was made for (a link sent to someone else); the warn log names both by pseudonym",
    registers: [this.registry],
  });
  readonly redisErrors = new Counter({ name: 'switchboard_redis_errors_total', help: 'Redis commands that failed', labelNames: ['command'] as const, registers: [this.registry] });

  /** The same metrics in the OpenMetrics format, which alone carries exemplars; set when exemplars are on. */
  readonly #openMetrics: Registry<OpenMetricsContentType> | undefined;

  /** `exemplars`: the request-duration histogram keeps the trace of an observation per bucket (tracing on). */
  constructor(withDefaults = true, exemplars = false) {
    const tally = (this.tally = new RequestTally(DURATION_BUCKETS, exemplars));
    // The two counters are prom-client's, filled from the tally when scraped (a label set's total each time).
    this.requests = new Counter({
      name: 'switchboard_requests_total',
      help: 'Client requests answered',
      labelNames: REQUEST_LABELS,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const c of tally.requests()) this.inc(c.labels, c.count);
      },
    });
    this.registry.registerMetric(new TallyHistogram('switchboard_request_duration_seconds', 'Time to answer a client request', tally) as unknown as Metric);
    this.toolCalls = new Counter({
      name: 'switchboard_tool_calls_total',
      help: 'tools/call by tool and outcome',
      labelNames: ['tool', 'outcome'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const c of tally.tools()) this.inc(c.labels, c.count);
      },
    });
    if (withDefaults) collectDefaultMetrics({ register: this.registry });
    if (exemplars) {
      const open = new Registry<OpenMetricsContentType>();
      open.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
      for (const { name } of this.registry.getMetricsAsArray()) open.registerMetric(this.registry.getSingleMetric(name)!);
      this.#openMetrics = open;
    }
  }

  /**
   * Without admin.watchConfig there is no watch to be up or down: the gauge's 0 read as "the watch is
   * down, edits are not applied" on every gateway that never watched (an alert on it always firing).
   */
  dropConfigWatch(): void {
    this.registry.removeSingleMetric('switchboard_config_watch_up');
    this.#openMetrics?.removeSingleMetric('switchboard_config_watch_up');
  }

  /** Called at every scrape to refresh gauges that are cheaper to read than to track. */
  onScrape(fn: () => void): void {
    this.#collectors.push(fn);
  }

  readonly #collectors: Array<() => void> = [];

  /** One scrape at a time: an OpenMetrics one renames the counters while it runs (see #renderNow). */
  #rendering: Promise<unknown> = Promise.resolve();

  /** The Prometheus text format, or OpenMetrics (with exemplars) when the scraper asks for it and exemplars are on. */
  render(accept?: string): Promise<{ contentType: string; body: string }> {
    const next = this.#rendering.then(() => this.#renderNow(accept));
    this.#rendering = next.catch(() => {});
    return next;
  }

  async #renderNow(accept: string | undefined): Promise<{ contentType: string; body: string }> {
    for (const c of this.#collectors) c();
    const open = this.#openMetrics && accept?.includes('application/openmetrics-text') ? this.#openMetrics : undefined;
    if (!open) return { contentType: this.registry.contentType, body: await this.registry.metrics() };
    // prom-client's OpenMetrics rendering strips `_total` from the name of every counter it renders, on
    // the metric itself, which both registries share: without the names put back, every Prometheus-format
    // scrape after one OpenMetrics scrape named the counters without `_total`.
    const names = this.registry.getMetricsAsArray().map((m) => [m, m.name] as const);
    try {
      return { contentType: open.contentType, body: await open.metrics() };
    } finally {
      for (const [m, name] of names) (m as { name: string }).name = name;
    }
  }
}
