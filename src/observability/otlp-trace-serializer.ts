import type { Attributes, AttributeValue, HrTime, Link, SpanContext, SpanStatus } from '@opentelemetry/api';
import type { ISerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace';
import { PairCache } from './pair-cache.js';
import { ProtobufBytes } from './protobuf-bytes.js';

type Resource = ReadableSpan['resource'];
type Scope = ReadableSpan['instrumentationScope'];

/**
 * The OTLP/HTTP protobuf body of an export (ExportTraceServiceRequest), byte for byte what the official
 * ProtobufTraceSerializer of @opentelemetry/otlp-transformer writes for the same spans (the same fields,
 * order, grouping by resource and scope, and defaults; test/unit/observability/otlp-trace-serializer.test.ts
 * compares the two), for the official exporter's HTTP transport, retries and configuration to send.
 * Why not the official one: with every call traced it was the largest single cost of tracing, about
 * 110,000 instructions per proxied call (two spans) of the 255,000 tracing added (callgrind, Node 22),
 * nearly half an untraced call: it walks every string three times, character by character.
 * Responses are read by the official deserializer (given to the constructor).
 */
export class OtlpTraceSerializer<Response> implements ISerializer<(ReadableSpan | EncodedSpan)[], Response> {
  readonly #out = new ProtobufBytes();
  readonly #deserialize: (data: Uint8Array) => Response;

  constructor(deserialize: (data: Uint8Array) => Response) {
    this.#deserialize = deserialize;
  }

  deserializeResponse(data: Uint8Array): Response {
    return this.#deserialize(data);
  }

  serializeRequest(spans: (ReadableSpan | EncodedSpan)[]): Uint8Array {
    const out = this.#out;
    out.reset();
    for (const [resource, scopes] of grouped(spans)) {
      out.tag(1, 2);
      const rs = out.open(2);
      writeResource(out, resource);
      for (const scopeSpans of scopes.values()) {
        out.tag(2, 2);
        const ss = out.open(2);
        const scope = scopeSpans[0]!.instrumentationScope;
        writeScope(out, scope);
        for (const span of scopeSpans) {
          if (span instanceof EncodedSpan) {
            out.raw(span.bytes, span.start, span.end);
          } else {
            out.tag(2, 2);
            writeSpan(out, span);
          }
        }
        if (scope.schemaUrl) {
          out.tag(3, 2);
          out.string(scope.schemaUrl);
        }
        out.close(ss);
      }
      if (resource.schemaUrl) {
        out.tag(3, 2);
        out.string(resource.schemaUrl);
      }
      out.close(rs);
    }
    return out.copy();
  }
}

/** TraceFlags.SAMPLED (a type import only: this module loads nothing of OpenTelemetry's at run time). */
const SAMPLED: SpanContext = Object.freeze({ traceId: '', spanId: '', traceFlags: 1 });

/**
 * A sampled span already written as its ScopeSpans.spans field (tag, length, Span message), in a buffer
 * shared with the spans written before and after it. It is what the batch processor queues in place of
 * the span itself (encoded-span-processor.ts): a small object instead of the span's whole graph (its
 * attributes, events, times, context), so that the spans waiting for their export do not outlive V8's
 * young generation and get copied and promoted on the way (a tenth of a traced call's instructions).
 */
export class EncodedSpan {
  readonly resource: Resource;
  readonly instrumentationScope: Scope;
  readonly bytes: Buffer;
  readonly start: number;
  readonly end: number;

  constructor(resource: Resource, scope: Scope, bytes: Buffer, start: number, end: number) {
    this.resource = resource;
    this.instrumentationScope = scope;
    this.bytes = bytes;
    this.start = start;
    this.end = end;
  }

  /** What the batch processor reads of a span besides its resource: the sampled flag (only sampled spans are encoded). */
  spanContext(): SpanContext {
    return SAMPLED;
  }
}

/** Writes a span as its ScopeSpans.spans field: what EncodedSpan holds. */
export function encodeSpan(out: ProtobufBytes, span: ReadableSpan): void {
  out.tag(2, 2);
  writeSpan(out, span);
}

/** Spans by resource, then by instrumentation scope, by identity and in first-seen order (as the official one). */
function grouped(spans: (ReadableSpan | EncodedSpan)[]): Map<Resource, Map<Scope, (ReadableSpan | EncodedSpan)[]>> {
  const resources = new Map<Resource, Map<Scope, (ReadableSpan | EncodedSpan)[]>>();
  for (const span of spans) {
    let scopes = resources.get(span.resource);
    if (!scopes) resources.set(span.resource, (scopes = new Map()));
    let list = scopes.get(span.instrumentationScope);
    if (!list) scopes.set(span.instrumentationScope, (list = []));
    list.push(span);
  }
  return resources;
}

function writeResource(out: ProtobufBytes, resource: Resource): void {
  out.tag(1, 2);
  const m = out.open(2);
  if (resource.attributes) writeAttributes(out, resource.attributes, 1);
  out.tag(2, 0);
  out.varint(0);
  out.close(m);
}

function writeScope(out: ProtobufBytes, scope: Scope): void {
  out.tag(1, 2);
  const m = out.open();
  out.tag(1, 2);
  out.string(scope.name);
  if (scope.version) {
    out.tag(2, 2);
    out.string(scope.version);
  }
  const { attributes, droppedAttributesCount } = scope as Scope & { attributes?: Attributes; droppedAttributesCount?: number };
  if (attributes) writeAttributes(out, attributes, 3);
  if (droppedAttributesCount) {
    out.tag(4, 0);
    out.varint(droppedAttributesCount);
  }
  out.close(m);
}

/** The span flags field: the trace flags, and whether the parent is remote (with the bit that says it is known). */
function flagsOf(traceFlags: number, remote: boolean | undefined): number {
  return (traceFlags & 255) | 256 | (remote ? 512 : 0);
}

/** One cache for the process: span attribute pairs are the same whichever serializer or processor writes them. */
const pairs = new PairCache();

function writeSpan(out: ProtobufBytes, span: ReadableSpan): void {
  const m = out.open(2);
  const ctx = span.spanContext();
  writeIds(out, ctx);
  const parent = span.parentSpanContext;
  if (parent?.spanId) {
    out.tag(4, 2);
    out.hex(parent.spanId);
  }
  out.tag(5, 2);
  out.string(span.name);
  const kind = span.kind == null ? 0 : span.kind + 1;
  if (kind !== 0) {
    out.tag(6, 0);
    out.varint(kind);
  }
  out.tag(7, 1);
  writeTime(out, span.startTime);
  out.tag(8, 1);
  writeTime(out, span.endTime);
  if (span.attributes) writeAttributes(out, span.attributes, 9, pairs);
  out.tag(10, 0);
  out.varint(span.droppedAttributesCount);
  for (const event of span.events) {
    out.tag(11, 2);
    writeEvent(out, event);
  }
  out.tag(12, 0);
  out.varint(span.droppedEventsCount);
  for (const link of span.links) {
    out.tag(13, 2);
    writeLink(out, link);
  }
  out.tag(14, 0);
  out.varint(span.droppedLinksCount);
  out.tag(15, 2);
  writeStatus(out, span.status);
  out.tag(16, 5);
  out.fixed32(flagsOf(ctx.traceFlags, parent?.isRemote));
  out.close(m);
}

/** Fields 1–3 of a Span and of a Span.Link alike: trace id, span id, trace state (when there is one). */
function writeIds(out: ProtobufBytes, ctx: SpanContext): void {
  out.tag(1, 2);
  out.hex(ctx.traceId);
  out.tag(2, 2);
  out.hex(ctx.spanId);
  const traceState = ctx.traceState?.serialize();
  if (traceState) {
    out.tag(3, 2);
    out.string(traceState);
  }
}

function writeStatus(out: ProtobufBytes, status: SpanStatus): void {
  const m = out.open();
  if (status.message) {
    out.tag(2, 2);
    out.string(status.message);
  }
  out.tag(3, 0);
  out.varint(status.code);
  out.close(m);
}

function writeEvent(out: ProtobufBytes, event: TimedEvent): void {
  const m = out.open();
  out.tag(1, 1);
  writeTime(out, event.time);
  out.tag(2, 2);
  out.string(event.name);
  if (event.attributes) writeAttributes(out, event.attributes, 3);
  out.tag(4, 0);
  out.varint(event.droppedAttributesCount || 0);
  out.close(m);
}

function writeLink(out: ProtobufBytes, link: Link): void {
  const m = out.open();
  const ctx = link.context;
  writeIds(out, ctx);
  if (link.attributes) writeAttributes(out, link.attributes, 4);
  out.tag(5, 0);
  out.varint(link.droppedAttributesCount || 0);
  out.tag(6, 5);
  out.fixed32(flagsOf(ctx.traceFlags, ctx.isRemote));
  out.close(m);
}

/** [seconds, nanoseconds] as one unsigned 64-bit count of nanoseconds, split without losing precision. */
function writeTime(out: ProtobufBytes, t: HrTime): void {
  const seconds = t[0];
  const nanos = t[1];
  const lowSeconds = (seconds & 65535) * 1e9;
  const highSeconds = ((seconds / 65536) >>> 0) * 1e9;
  const low = (lowSeconds >>> 0) + (((highSeconds & 65535) * 65536) >>> 0) + nanos;
  const high = Math.floor(lowSeconds / 4294967296) + ((highSeconds / 65536) >>> 0) + Math.floor(low / 4294967296);
  out.fixed64(low >>> 0, high >>> 0);
}

function writeAttributes(out: ProtobufBytes, attributes: Attributes, field: number, pairs?: PairCache): void {
  const tag = (field << 3) | 2;
  for (const key in attributes) {
    if (!Object.prototype.hasOwnProperty.call(attributes, key)) continue;
    const value = attributes[key];
    if (typeof value === 'string') {
      const known = pairs?.find(key, value);
      if (known !== undefined) {
        out.raw(known);
        continue;
      }
      const start = out.pos;
      if (out.asciiPair(tag, key, value)) {
        pairs?.remember(key, value, out, start);
        continue;
      }
    }
    out.byte(tag);
    writeKeyValue(out, key, value);
  }
}

function writeKeyValue(out: ProtobufBytes, key: string, value: unknown): void {
  const m = out.open();
  out.tag(1, 2);
  out.string(key);
  out.tag(2, 2);
  const v = out.open();
  writeAnyValue(out, value);
  out.close(v);
  out.close(m);
}

const MIN_INT64 = -(2 ** 63);
const MAX_INT64 = 2 ** 63;

/** An AnyValue: string, bool, int (integral numbers in the int64 range), double, bytes, array, key-value list. */
function writeAnyValue(out: ProtobufBytes, value: AttributeValue | unknown): void {
  switch (typeof value) {
    case 'string':
      out.tag(1, 2);
      out.string(value);
      return;
    case 'boolean':
      out.tag(2, 0);
      out.varint(value ? 1 : 0);
      return;
    case 'number':
      if (Number.isInteger(value) && value >= MIN_INT64 && value < MAX_INT64) {
        out.tag(3, 0);
        out.varint(value);
      } else {
        out.tag(4, 1);
        out.double(value);
      }
      return;
  }
  if (value instanceof Uint8Array) {
    out.tag(7, 2);
    out.bytes(value);
  } else if (Array.isArray(value)) {
    out.tag(5, 2);
    const list = out.open();
    for (const item of value) {
      out.tag(1, 2);
      const one = out.open();
      writeAnyValue(out, item);
      out.close(one);
    }
    out.close(list);
  } else if (typeof value === 'object' && value !== null) {
    out.tag(6, 2);
    const list = out.open();
    const members = value as Record<string, unknown>;
    for (const k in members) {
      if (!Object.prototype.hasOwnProperty.call(members, k)) continue;
      out.tag(1, 2);
      writeKeyValue(out, k, members[k]);
    }
    out.close(list);
  }
}
