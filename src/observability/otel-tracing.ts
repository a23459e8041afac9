import { ROOT_CONTEXT, SpanKind, SpanStatusCode, createContextKey, createNoopMeter, defaultTextMapGetter, defaultTextMapSetter, isSpanContextValid, propagation, trace, type Attributes, type Context, type Link, type Meter, type MeterProvider, type Span, type SpanContext, type TextMapGetter, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, ExportResultCode, TraceState, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider, type Sampler, type SpanExporter } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { wellFormedMember } from './baggage-grammar.js';
import type { Logger } from './logger.js';
import { EncodedSpanProcessor } from './encoded-span-processor.js';
import { OtlpTraceSerializer } from './otlp-trace-serializer.js';
import type { ResolvedTracing } from './tracing-options.js';
import type { HeaderCarrier, SpanFailure, TraceAttributes, TraceSpan, Tracing } from './tracing.js';

/**
 * Tracing with the OpenTelemetry SDK. Loaded only when tracing is on (load-tracing.ts). Nothing is
 * registered globally (no global tracer provider, context manager or propagator): two gateways in one
 * process (tests, an embedding application) each keep their own, and the host's are left alone.
 */
export async function startOtelTracing(o: ResolvedTracing, logger: Logger): Promise<Tracing> {
  const exporter = reporting(await exporterFor(o), logger);
  const detected = detectResources({ detectors: [envDetector] });
  let resource = defaultResource().merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'switchboard', [ATTR_SERVICE_VERSION]: '0.1.0' })).merge(detected);
  if (o.serviceName) resource = resource.merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: o.serviceName }));
  const batch = new BatchSpanProcessor({ exporter, ...o.batch, selfObsMeterProvider: droppedSpans(logger) });
  const provider = new TracerProvider({
    resource,
    // A client's sampled flag is followed (unless OTEL_TRACES_SAMPLER names a sampler that is not
    // parentbased_); the ratio decides for the traces the gateway starts. Neither
    // sampler reads attributes, nor does the batch processor's onStart: spans get theirs after starting
    // (see #start), so a sampler or processor that needs them at start cannot simply be added here.
    // At 1 every trace id the SDK makes is sampled, at 0 none: AlwaysOn and AlwaysOff say so without
    // reading the id (the ratio sampler hashes its 32 characters for every trace the gateway starts).
    sampler: o.parentBased ? new ParentBasedSampler({ root: ratioSampler(o.sampleRatio) }) : ratioSampler(o.sampleRatio),
    spanLimits: o.limits,
    spanProcessors: [o.protocol === 'http/json' ? batch : new EncodedSpanProcessor(batch)],
  });
  return new OtelTracing(provider, provider.getTracer('switchboard', '0.1.0'), o.recordPrincipal, o.linkCallers);
}

function ratioSampler(ratio: number): Sampler {
  return ratio >= 1 ? new AlwaysOnSampler() : ratio <= 0 ? new AlwaysOffSampler() : new TraceIdRatioBasedSampler(ratio);
}

async function exporterFor(o: ResolvedTracing): Promise<SpanExporter> {
  // Only the chosen encoding's exporter is loaded. No url: the exporter reads OTEL_EXPORTER_OTLP_* itself.
  const config = o.url === undefined ? { headers: o.headers } : { url: o.url, headers: o.headers };
  if (o.protocol === 'http/json') return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter(config);
  // The official protobuf exporter (its HTTP transport, retries, OTEL_EXPORTER_OTLP_* configuration and
  // response reading), as exporter-trace-otlp-proto assembles it, with the request body written by
  // OtlpTraceSerializer: the same bytes for a fraction of the work (see there).
  const [{ OTLPExporterBase }, { convertLegacyHttpOptions, createOtlpHttpExportDelegate }, { ProtobufTraceSerializer, TraceExporterMetricsHelper }] = await Promise.all([
    import('@opentelemetry/otlp-exporter-base'),
    import('@opentelemetry/otlp-exporter-base/node-http'),
    import('@opentelemetry/otlp-transformer'),
  ]);
  const serializer = new OtlpTraceSerializer(ProtobufTraceSerializer.deserializeResponse);
  const options = convertLegacyHttpOptions(config, 'TRACES', 'v1/traces', { 'Content-Type': 'application/x-protobuf' });
  return new OTLPExporterBase(createOtlpHttpExportDelegate(options, serializer, 'otlp_http_span_exporter', TraceExporterMetricsHelper, undefined));
}

/** Failed exports said in the log (at most once a minute): the SDK itself is silent about them. */
function reporting(exporter: SpanExporter, logger: Logger): SpanExporter {
  let lastWarned = 0;
  return {
    export: (spans, done) =>
      exporter.export(spans, (result) => {
        if (result.code !== ExportResultCode.SUCCESS && Date.now() - lastWarned > 60_000) {
          lastWarned = Date.now();
          logger.warn({ err: result.error?.message, spans: spans.length }, 'tracing: spans could not be exported to the OTLP endpoint (said at most once a minute)');
        }
        done(result);
      }),
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}

/** The batch processor's count of finished spans (otel.sdk.processor.span.processed); queue_full marks the dropped. */
const PROCESSED = 'otel.sdk.processor.span.processed';

/**
 * Spans the batch processor dropped because its queue was full (a collector slower than the gateway
 * makes spans): said in the log at most once a minute, with how many since the last line. The SDK tells
 * only its diagnostic logger, which is global (nothing is registered here), and its self-observability
 * meter (an experimental option of the pinned release), given this one counter.
 */
function droppedSpans(logger: Logger): MeterProvider {
  let dropped = 0;
  let lastWarned = 0;
  const noop = createNoopMeter();
  const counted = {
    add(n: number, attributes?: Attributes): void {
      if (attributes?.['error.type'] !== 'queue_full') return;
      dropped += n;
      if (Date.now() - lastWarned <= 60_000) return;
      lastWarned = Date.now();
      logger.warn({ dropped }, 'tracing: spans dropped, the export queue was full (the collector takes spans slower than they are made; see OTEL_BSP_MAX_QUEUE_SIZE; said at most once a minute)');
      dropped = 0;
    },
  };
  const meter: Meter = Object.assign(Object.create(noop) as Meter, {
    createCounter: (name: string, options?: Parameters<Meter['createCounter']>[1]) => (name === PROCESSED ? counted : noop.createCounter(name, options)),
  });
  return { getMeter: () => meter };
}

/**
 * W3C baggage with each member held to the specification's grammar (baggage-grammar.ts says what the
 * official propagator lets through): a member that is not is left out, the others kept. Checked only
 * when a request brings baggage.
 */
class CheckedBaggagePropagator extends W3CBaggagePropagator {
  override extract(context: Context, carrier: unknown, getter: TextMapGetter): Context {
    const extracted = super.extract(context, carrier, getter);
    const baggage = extracted === context ? undefined : propagation.getBaggage(extracted);
    if (baggage === undefined) return extracted;
    let kept = baggage;
    for (const [key, entry] of baggage.getAllEntries()) if (!wellFormedMember(key, entry.metadata?.toString())) kept = kept.removeEntry(key);
    if (kept === baggage) return extracted;
    return kept.getAllEntries().length > 0 ? propagation.setBaggage(context, kept) : context;
  }
}

/** What OpenTelemetry's TraceState keeps of a tracestate at most (its MAX_TRACE_STATE_LEN, the W3C's 512). */
const KEPT_TRACE_STATE = 512;

/**
 * W3C trace context whose tracestate holds only the list OpenTelemetry keeps of it (at most 512
 * characters), not the client's text. The SDK's TraceState keeps its raw text for as long as it lives,
 * and it lives on every span of the request: a params._meta tracestate as large as the body, on spans
 * waiting in the export queue (OTLP/JSON queues spans, by count), would hold megabytes per span.
 */
class CompactTraceContextPropagator extends W3CTraceContextPropagator {
  override extract(context: Context, carrier: unknown, getter: TextMapGetter): Context {
    const extracted = super.extract(context, carrier, getter);
    const raw = getter.get(carrier, 'tracestate');
    const length = Array.isArray(raw) ? raw.reduce((n, s) => n + s.length + 1, 0) : (raw?.length ?? 0);
    const sc = length > KEPT_TRACE_STATE && extracted !== context ? trace.getSpanContext(extracted) : undefined;
    if (!sc?.traceState) return extracted;
    // A copy, not the serialized text: that is made of slices of the raw text (V8 keeps a slice as a view into it).
    const kept = Buffer.from(sc.traceState.serialize(), 'utf16le').toString('utf16le');
    return trace.setSpanContext(context, { ...sc, traceState: new TraceState(kept) });
  }
}

const PROPAGATED = ['traceparent', 'tracestate', 'baggage'] as const;

/**
 * With callerContext `link`: the span context of a request's HTTP trace headers, kept in the ambient
 * context to be linked, in place of the extracted context itself (its span, baggage and tracestate).
 */
const CALLER = createContextKey('switchboard.caller');

/** The context's span context when it is a valid one (a link needs one). */
function validSpanContext(context: Context | undefined): SpanContext | undefined {
  const sc = context && trace.getSpanContext(context);
  return sc && isSpanContextValid(sc) ? sc : undefined;
}

/** The trace fields of a params._meta, as strings only: anything else in it is the client's business. */
function metaCarrier(meta: unknown): Record<string, string> | undefined {
  if (meta === null || typeof meta !== 'object') return undefined;
  const m = meta as Record<string, unknown>;
  if (typeof m.traceparent !== 'string') return undefined;
  const out: Record<string, string> = {};
  for (const k of PROPAGATED) if (typeof m[k] === 'string') out[k] = m[k];
  return out;
}

/** Links to a client's contexts (the request's _meta, its HTTP headers), those it has. */
function callerLinks(...contexts: Array<SpanContext | undefined>): Link[] | undefined {
  const links: Link[] = [];
  for (const context of contexts) if (context !== undefined) links.push({ context });
  return links.length > 0 ? links : undefined;
}

// Attributes go to the SDK as they are: it drops undefined values itself (startSpan, setAttribute and
// addEvent alike), so a copy without them here would only be a second copy per span.

class OtelSpan implements TraceSpan {
  readonly #span: Span;
  readonly #context: Context;
  readonly #owner: OtelTracing;

  constructor(span: Span, context: Context, owner: OtelTracing) {
    this.#span = span;
    this.#context = context;
    this.#owner = owner;
  }

  event(name: string, attributes?: TraceAttributes): void {
    this.#span.addEvent(name, attributes);
  }

  set(attributes: Readonly<TraceAttributes>): void {
    this.#span.setAttributes(attributes);
  }

  rename(name: string): void {
    this.#span.updateName(name);
  }

  end(failure?: SpanFailure): void {
    if (failure) {
      this.#span.setAttribute('error.type', failure.type);
      this.#span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
    }
    this.#span.end();
  }

  run<T>(fn: () => T): T {
    return this.#owner.within(this.#context, fn);
  }

  inject(carrier: Record<string, unknown>): void {
    this.#owner.inject(this.#context, carrier);
  }
}

class OtelTracing implements Tracing {
  readonly enabled = true;
  readonly recordPrincipal: boolean;
  /**
   * A client's context is linked, never continued (tracing.callerContext: link): it chooses neither the
   * trace id, nor whether the request is sampled, nor the baggage and tracestate upstreams are sent.
   */
  readonly #linkCallers: boolean;
  readonly #provider: TracerProvider;
  readonly #tracer: Tracer;
  readonly #contexts = new AsyncLocalStorageContextManager();
  readonly #propagator = new CompositePropagator({ propagators: [new CompactTraceContextPropagator(), new CheckedBaggagePropagator()] });

  constructor(provider: TracerProvider, tracer: Tracer, recordPrincipal: boolean, linkCallers: boolean) {
    this.recordPrincipal = recordPrincipal;
    this.#linkCallers = linkCallers;
    this.#provider = provider;
    this.#tracer = tracer;
  }

  within<T>(context: Context, fn: () => T): T {
    return this.#contexts.with(context, fn);
  }

  inject(context: Context, carrier: Record<string, unknown>): void {
    this.#propagator.inject(context, carrier, defaultTextMapSetter);
  }

  withHeaders<T>(headers: HeaderCarrier, fn: () => T): T {
    if (headers.traceparent === undefined && headers.baggage === undefined) return fn();
    const extracted = this.#propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
    if (!this.#linkCallers) return this.#contexts.with(extracted, fn);
    const caller = validSpanContext(extracted);
    return caller ? this.#contexts.with(ROOT_CONTEXT.setValue(CALLER, caller), fn) : fn();
  }

  server(name: string, meta: unknown, attributes: TraceAttributes): TraceSpan {
    const ambient = this.#contexts.active();
    const carrier = metaCarrier(meta);
    const fromMeta = carrier && this.#propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
    if (this.#linkCallers) return this.#start(name, SpanKind.SERVER, attributes, ROOT_CONTEXT, callerLinks(validSpanContext(fromMeta), ambient.getValue(CALLER) as SpanContext | undefined));
    const metaParent = fromMeta && trace.getSpanContext(fromMeta);
    let parent = ambient;
    let links: Link[] | undefined;
    if (metaParent && isSpanContextValid(metaParent)) {
      // The MCP convention: the request's own context is the parent; the transport's (HTTP) is linked.
      parent = fromMeta!;
      const transport = trace.getSpanContext(ambient);
      if (transport && isSpanContextValid(transport)) links = [{ context: transport }];
    }
    return this.#start(name, SpanKind.SERVER, attributes, parent, links);
  }

  client(name: string, attributes: TraceAttributes): TraceSpan | undefined {
    const parent = this.#contexts.active();
    if (!trace.getSpan(parent)) return undefined;
    return this.#start(name, SpanKind.CLIENT, attributes, parent);
  }

  forward(headers: HeaderCarrier, attributes: TraceAttributes): TraceSpan {
    const parent = headers.traceparent === undefined && headers.baggage === undefined ? ROOT_CONTEXT : this.#propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
    if (this.#linkCallers) return this.#start('forward', SpanKind.CLIENT, attributes, ROOT_CONTEXT, callerLinks(validSpanContext(parent)));
    return this.#start('forward', SpanKind.CLIENT, attributes, parent);
  }

  internal(name: string, attributes: TraceAttributes): TraceSpan | undefined {
    const parent = this.#contexts.active();
    if (!trace.getSpan(parent)) return undefined;
    return this.#start(name, SpanKind.INTERNAL, attributes, parent);
  }

  /**
   * Attributes are set on the started span, not given to startSpan: the SDK cleans what startSpan is
   * given twice (once for the sampler, once for the span; each value checked with a WeakSet of its own),
   * and even for a span it then does not record. The samplers here decide by trace id alone.
   */
  #start(name: string, kind: SpanKind, attributes: TraceAttributes, parent: Context, links?: Link[]): TraceSpan {
    const span = this.#tracer.startSpan(name, links ? { kind, links } : { kind }, parent);
    if (span.isRecording()) span.setAttributes(attributes);
    return new OtelSpan(span, trace.setSpan(parent, span), this);
  }

  detached<T>(fn: () => T): T {
    return this.#contexts.with(ROOT_CONTEXT, fn);
  }

  event(name: string, attributes?: TraceAttributes): void {
    trace.getSpan(this.#contexts.active())?.addEvent(name, attributes);
  }

  activeIds(): { trace_id: string; span_id: string } | undefined {
    const span = trace.getSpan(this.#contexts.active());
    if (!span?.isRecording()) return undefined;
    const { traceId, spanId } = span.spanContext();
    return { trace_id: traceId, span_id: spanId };
  }

  flush(): Promise<void> {
    return this.#provider.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.#provider.shutdown();
  }
}
