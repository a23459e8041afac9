// The OTLP/HTTP protobuf body of an export: byte for byte what the official ProtobufTraceSerializer writes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SpanKind, SpanStatusCode, TraceFlags, context, trace, type Attributes, type SpanContext } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { OtlpTraceSerializer } from '../../../src/observability/otlp-trace-serializer.js';

const ours = new OtlpTraceSerializer(ProtobufTraceSerializer.deserializeResponse);

function same(spans: ReadableSpan[], what: string): void {
  const expected = Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!);
  const actual = Buffer.from(ours.serializeRequest(spans));
  if (!actual.equals(expected)) {
    let at = 0;
    while (at < Math.min(actual.length, expected.length) && actual[at] === expected[at]) at++;
    assert.fail(`${what}: ${actual.length} bytes against the official ${expected.length}, first difference at byte ${at}:\n  ours     ${actual.subarray(Math.max(0, at - 16), at + 16).toString('hex')}\n  official ${expected.subarray(Math.max(0, at - 16), at + 16).toString('hex')}`);
  }
}

/** A seeded generator, so that a failure can be repeated. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = ['a', 'mcp.method.name', 'é', '€', '😀', '\ud800', '\udc00', '"', '\\', '\n', '\u2028', '\u0000', 'x'.repeat(40), 'ü'.repeat(30)];

function text(r: () => number, max: number): string {
  let s = '';
  const n = Math.floor(r() * max);
  for (let i = 0; i < n; i++) s += PIECES[Math.floor(r() * PIECES.length)];
  return s;
}

function value(r: () => number, depth = 0): unknown {
  switch (Math.floor(r() * (depth > 1 ? 6 : 9))) {
    case 0: return text(r, 12);
    case 1: return r() < 0.5;
    case 2: return Math.floor((r() - 0.5) * 2 ** Math.floor(r() * 70));
    case 3: return [NaN, Infinity, -Infinity, -0, 0.5, 1e300, -1e-300, 2 ** 63, -(2 ** 63), 2 ** 53 + 2, 4294967295, 4294967296][Math.floor(r() * 12)];
    case 4: return (r() - 0.5) * 1e6;
    case 5: return text(r, 300);
    case 6: return Array.from({ length: Math.floor(r() * 5) }, () => value(r, depth + 1));
    case 7: return new Uint8Array(Array.from({ length: Math.floor(r() * 200) }, () => Math.floor(r() * 256)));
    default: return Object.fromEntries(Array.from({ length: Math.floor(r() * 4) }, () => [text(r, 4), value(r, depth + 1)]));
  }
}

function attributes(r: () => number, max: number): Attributes {
  return Object.fromEntries(Array.from({ length: Math.floor(r() * max) }, () => [text(r, 6), value(r)])) as Attributes;
}

const hex = (r: () => number, n: number) => Array.from({ length: n }, () => '0123456789abcdefABCDEFxz'[Math.floor(r() * 24)]).join('');

/** A ReadableSpan as the exporter reads one, with anything in every field (the serializer reads fields only). */
function made(r: () => number, resources: ReadableSpan['resource'][], scopes: ReadableSpan['instrumentationScope'][]): ReadableSpan {
  const ctx = (): SpanContext => ({
    traceId: hex(r, r() < 0.9 ? 32 : 31),
    spanId: hex(r, 16),
    traceFlags: Math.floor(r() * 300),
    ...(r() < 0.3 ? { traceState: new TraceState(`a=${Math.floor(r() * 1e6)},b=c`) } : {}),
    ...(r() < 0.5 ? { isRemote: r() < 0.5 } : {}),
  });
  const time = (): [number, number] => [Math.floor(r() * 2 ** (r() < 0.5 ? 31 : 40)), Math.floor(r() * 1e9)];
  const status = r() < 0.3 ? { code: SpanStatusCode.ERROR, message: text(r, 20) } : { code: Math.floor(r() * 3) };
  const own = ctx();
  const span = {
    name: text(r, 10),
    kind: r() < 0.1 ? (undefined as unknown as SpanKind) : Math.floor(r() * 5),
    spanContext: () => own,
    parentSpanContext: r() < 0.6 ? ctx() : undefined,
    startTime: time(),
    endTime: time(),
    status,
    attributes: attributes(r, 12),
    links: Array.from({ length: Math.floor(r() * 3) }, () => ({ context: ctx(), ...(r() < 0.5 ? { attributes: attributes(r, 3) } : {}), ...(r() < 0.3 ? { droppedAttributesCount: Math.floor(r() * 9) } : {}) })),
    events: Array.from({ length: Math.floor(r() * 3) }, () => ({ name: text(r, 6), time: time(), ...(r() < 0.5 ? { attributes: attributes(r, 3) } : {}), ...(r() < 0.3 ? { droppedAttributesCount: Math.floor(r() * 9) } : {}) })),
    duration: [0, 0],
    ended: true,
    resource: resources[Math.floor(r() * resources.length)]!,
    instrumentationScope: scopes[Math.floor(r() * scopes.length)]!,
    droppedAttributesCount: Math.floor(r() * 3) * 100,
    droppedEventsCount: Math.floor(r() * 200),
    droppedLinksCount: Math.floor(r() * 2),
  };
  return span as unknown as ReadableSpan;
}

describe('OtlpTraceSerializer', () => {
  it('writes the official bytes for spans the SDK makes: kinds, parents local and remote, events, links, status, limits, two resources and scopes', async () => {
    const exporter = new InMemorySpanExporter();
    const providers = [
      new TracerProvider({ resource: resourceFromAttributes({ 'service.name': 'switchboard', n: 1, ok: true, list: ['a', 'b'] }), spanProcessors: [new SimpleSpanProcessor({ exporter })] }),
      new TracerProvider({ resource: resourceFromAttributes({ 'service.name': 'other', 'ü': 'ß' }), spanLimits: { attributeCountLimit: 3, eventCountLimit: 1, linkCountLimit: 1, attributeValueLengthLimit: 5 }, spanProcessors: [new SimpleSpanProcessor({ exporter })] }),
    ];
    for (const provider of providers) {
      for (const tracer of [provider.getTracer('switchboard', '0.1.0'), provider.getTracer('bare'), provider.getTracer('schema', '1', { schemaUrl: 'https://opentelemetry.io/schemas/1.30.0' })]) {
        const server = tracer.startSpan('tools/call get-sum', { kind: SpanKind.SERVER, attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'get-sum', 'jsonrpc.request.id': '7', big: 2 ** 40, neg: -3, half: 0.5 } });
        const remote = trace.setSpanContext(context.active(), { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED, isRemote: true, traceState: new TraceState('rojo=00f067aa0ba902b7') });
        const client = tracer.startSpan('tools/call add', { kind: SpanKind.CLIENT, links: [{ context: server.spanContext(), attributes: { why: 'transport' } }, { context: server.spanContext() }] }, remote);
        client.addEvent('policy.denied', { reason: 'not_allowed', kind: 'tool' });
        client.addEvent('retry', { attempt: 2 });
        client.setAttributes({ a: 'x', b: 'y', c: 'z', d: 'long value here', e: ['one', 'two'] });
        client.setStatus({ code: SpanStatusCode.ERROR, message: 'upstream timed out: é' });
        client.end();
        const child = tracer.startSpan('queue', { kind: SpanKind.INTERNAL }, trace.setSpan(context.active(), server));
        child.end();
        server.setStatus({ code: SpanStatusCode.OK });
        server.end();
      }
    }
    await Promise.all(providers.map((p) => p.forceFlush()));
    const spans = exporter.getFinishedSpans();
    assert.equal(spans.length, 18);
    same(spans, 'SDK spans');
    for (let i = 0; i < spans.length; i++) same([spans[i]!], `SDK span ${i}`);
    same([...spans].reverse(), 'SDK spans reversed');
  });

  it('writes the official bytes for 3,000 random batches (every value type, non-ASCII and lone surrogates, long strings, odd ids, any times)', () => {
    const r = random(20261203);
    const resources = [resourceFromAttributes({ 'service.name': 'a' }), resourceFromAttributes(attributes(r, 8) as Record<string, string>), { attributes: {}, schemaUrl: 'https://example.com/s' } as unknown as ReadableSpan['resource']];
    const scopes = [{ name: 'switchboard', version: '0.1.0' }, { name: 'x', schemaUrl: 'https://example.com/scope' }, { name: 'é', version: '', attributes: { k: 'v' }, droppedAttributesCount: 2 }] as ReadableSpan['instrumentationScope'][];
    for (let batch = 0; batch < 3000; batch++) {
      const spans = Array.from({ length: Math.floor(r() * 6) }, () => made(r, resources, scopes));
      same(spans, `batch ${batch}`);
    }
  });

  it('writes lengths of every size: messages across the one-, two- and three-byte length boundaries, and a buffer that must grow', () => {
    const resource = resourceFromAttributes({ 'service.name': 'switchboard' });
    const scope = { name: 'switchboard' };
    const r = random(7);
    for (const n of [0, 1, 90, 100, 110, 120, 126, 127, 128, 129, 200, 16_250, 16_383, 16_384, 16_500, 70_000, 300_000]) {
      const span = made(r, [resource], [scope]) as unknown as Record<string, unknown>;
      span.name = 'n'.repeat(n);
      span.attributes = { k: 'v'.repeat(n), u: 'é'.repeat(n >> 1) };
      same([span as unknown as ReadableSpan], `a name of ${n}`);
    }
    // Attribute pairs around the one-byte-lengths fast path's edge, ASCII or with one character beyond it at either end.
    for (let total = 110; total <= 132; total++) {
      for (const odd of ['', 'key', 'value']) {
        const span = made(r, [resource], [scope]) as unknown as Record<string, unknown>;
        const key = 'k'.repeat(total >> 2) + (odd === 'key' ? 'é' : '');
        span.attributes = { [key]: 'v'.repeat(total - (total >> 2)) + (odd === 'value' ? '\u0080' : ''), short: 'x' };
        same([span as unknown as ReadableSpan], `a pair of ${total} characters${odd ? `, non-ASCII ${odd}` : ''}`);
      }
    }
    // One export of many spans (the batch processor's 512), twice: the reused buffer leaves nothing behind.
    const many = Array.from({ length: 512 }, () => made(r, [resource], [scope]));
    same(many, '512 spans');
    same(many.slice(0, 3), 'then 3 spans');
    assert.equal(ours.serializeRequest([]).length, 0);
  });

  it('hands out a copy: a body being sent is not overwritten by the next export', () => {
    const r = random(11);
    const resource = resourceFromAttributes({ 'service.name': 'switchboard' });
    const first = ours.serializeRequest([made(r, [resource], [{ name: 's' }])]);
    const kept = Buffer.from(first);
    ours.serializeRequest([made(r, [resource], [{ name: 's' }])]);
    assert.ok(Buffer.from(first).equals(kept));
  });

  it('reads responses with the official deserializer', () => {
    // ExportTraceServiceResponse { partial_success { rejected_spans: 3, error_message: "no" } }
    const body = Uint8Array.from([0x0a, 0x06, 0x08, 0x03, 0x12, 0x02, 0x6e, 0x6f]);
    assert.deepEqual(ours.deserializeResponse(body), ProtobufTraceSerializer.deserializeResponse(body));
  });
});
