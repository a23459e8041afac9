/**
 * The gateway's own small tracing interface. The request path talks only to this; the OpenTelemetry
 * implementation (otel-tracing.ts) is imported dynamically, and only when tracing is enabled, so a
 * gateway with tracing off loads no SDK module and pays one `enabled` check per request.
 */

export type TraceAttributes = Record<string, string | number | boolean | undefined>;

/** Headers of an HTTP request, as Node gives them. */
export type HeaderCarrier = Record<string, string | string[] | undefined>;

/** Why a span failed: error.type (a low-cardinality class) and the status description. */
export interface SpanFailure {
  type: string;
  message?: string | undefined;
}

export interface TraceSpan {
  /** A point in the span's life (a policy refusal, a retry, an input_required round). */
  event(name: string, attributes?: TraceAttributes): void;
  set(attributes: Readonly<TraceAttributes>): void;
  /** Names the span anew: its target was learnt after it started (the tool a call_tool runs). */
  rename(name: string): void;
  /** Ends the span: a failure sets error.type and the error status. */
  end(failure?: SpanFailure): void;
  /** Runs fn with this span active: what fn starts (upstream calls, log lines) belongs to it. */
  run<T>(fn: () => T): T;
  /** Writes this span's context (traceparent, tracestate, baggage) into a carrier: a params._meta or headers. */
  inject(carrier: Record<string, unknown>): void;
}

export interface Tracing {
  readonly enabled: boolean;
  /** Tenant and subject may be span attributes (tracing.recordPrincipal). */
  readonly recordPrincipal: boolean;
  /** Runs fn with an HTTP request's trace headers (traceparent, tracestate, baggage) as the ambient context. */
  withHeaders<T>(headers: HeaderCarrier, fn: () => T): T;
  /**
   * A SERVER span for a client's JSON-RPC request. Its parent is the context in the request's
   * params._meta when there is one (the MCP convention), else the ambient one (the HTTP headers);
   * when both are there the ambient one is linked.
   */
  server(name: string, meta: unknown, attributes: TraceAttributes): TraceSpan;
  /** A CLIENT span (an upstream request), child of the active span; undefined outside one (health checks). */
  client(name: string, attributes: TraceAttributes): TraceSpan | undefined;
  /**
   * A CLIENT span for a request this replica forwards to the replica that owns its session: a child of
   * the request's HTTP trace headers (a root without them). Injected into the forwarded request's headers,
   * it becomes the owner's parent (or, when the request names its own context in params._meta, its link),
   * so one trace crosses the replicas.
   */
  forward(headers: HeaderCarrier, attributes: TraceAttributes): TraceSpan;
  /** An INTERNAL span (a queue wait), child of the active span; undefined outside one. */
  internal(name: string, attributes: TraceAttributes): TraceSpan | undefined;
  /**
   * Runs fn outside any span: for work that outlives the request that happened to start it (an
   * upstream process with its health-check timer and restarts), which must not join that trace.
   */
  detached<T>(fn: () => T): T;
  /** An event on the active span, if any. */
  event(name: string, attributes?: TraceAttributes): void;
  /** The active span's ids (log lines, exemplars), or undefined outside one or when it is not sampled. */
  activeIds(): { trace_id: string; span_id: string } | undefined;
  /** Exports what is buffered. */
  flush(): Promise<void>;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

/** The default: every method returns at once, nothing is allocated. */
export const NO_TRACING: Tracing = {
  enabled: false,
  recordPrincipal: false,
  withHeaders: (_headers, fn) => fn(),
  server: () => NO_SPAN,
  client: () => undefined,
  forward: () => NO_SPAN,
  internal: () => undefined,
  detached: (fn) => fn(),
  event: () => {},
  activeIds: () => undefined,
  flush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};

const NO_SPAN: TraceSpan = {
  event: () => {},
  set: () => {},
  rename: () => {},
  end: () => {},
  run: (fn) => fn(),
  inject: () => {},
};

/** `tracing:` of the config file, as the loader needs it (the config's TracingConfig has this shape). */
export interface TracingOptions {
  enabled: boolean;
  endpoint?: string | undefined;
  protocol?: 'http/protobuf' | 'http/json' | undefined;
  sampleRatio?: number | undefined;
  serviceName?: string | undefined;
  headers: Readonly<Record<string, string>>;
  recordPrincipal: boolean;
  /** `link`: a client's context is linked, never continued (see tracing-schema.ts); absent: `parent`. */
  callerContext?: 'parent' | 'link' | undefined;
}
