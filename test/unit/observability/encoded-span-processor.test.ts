// Spans written as protobuf when they end and queued as bytes: the export body is still the official one.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SpanKind, SpanStatusCode, context, trace, type Context } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, ParentBasedSampler, TracerProvider, TraceIdRatioBasedSampler, type ReadableSpan, type Sampler, type Span, type SpanProcessor } from '@opentelemetry/sdk-trace';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { EncodedSpanProcessor } from '../../../src/observability/encoded-span-processor.js';
import { EncodedSpan, OtlpTraceSerializer } from '../../../src/observability/otlp-trace-serializer.js';

/** Keeps what it is given: the spans themselves, or what EncodedSpanProcessor hands on. */
class Kept implements SpanProcessor {
  readonly ended: ReadableSpan[] = [];
  shutdowns = 0;
  onStart(_span: Span, _parent: Context): void {}
  onEnd(span: ReadableSpan): void {
    this.ended.push(span);
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    this.shutdowns++;
    return Promise.resolve();
  }
}

function setup(sampler?: Sampler) {
  const spans = new Kept();
  const queued = new Kept();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'switchboard' }),
    ...(sampler ? { sampler } : {}),
    spanProcessors: [spans, new EncodedSpanProcessor(queued)],
  });
  return { spans, queued, provider, tracer: provider.getTracer('switchboard', '0.1.0') };
}

const official = (spans: ReadableSpan[]) => Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!);
const ours = new OtlpTraceSerializer(ProtobufTraceSerializer.deserializeResponse);

describe('EncodedSpanProcessor', () => {
  it('queues each sampled span as its bytes, and an export of them is the official body of the spans', () => {
    const { spans, queued, tracer } = setup();
    for (let i = 0; i < 50; i++) {
      const server = tracer.startSpan('tools/call echo', { kind: SpanKind.SERVER });
      server.setAttributes({ 'mcp.method.name': 'tools/call', 'jsonrpc.request.id': String(i), 'gen_ai.tool.name': 'écho' });
      const client = tracer.startSpan('tools/call echo', { kind: SpanKind.CLIENT }, trace.setSpan(context.active(), server));
      client.addEvent('retry', { attempt: 1 });
      client.setStatus({ code: i % 3 === 0 ? SpanStatusCode.ERROR : SpanStatusCode.UNSET, message: 'timed out' });
      client.end();
      server.end();
    }
    assert.equal(queued.ended.length, 100);
    assert.ok(queued.ended.every((s) => s instanceof EncodedSpan && (s.spanContext().traceFlags & 1) === 1));
    assert.ok(official(spans.ended).equals(Buffer.from(ours.serializeRequest(queued.ended))));
    // A batch from the middle of the queue, as the batch processor cuts them.
    assert.ok(official(spans.ended.slice(17, 61)).equals(Buffer.from(ours.serializeRequest(queued.ended.slice(17, 61)))));
  });

  it('stays right across its buffers: thousands of spans, some larger than a buffer, kept while later ones are written', () => {
    const { spans, queued, tracer } = setup();
    for (let i = 0; i < 3000; i++) {
      const span = tracer.startSpan(`span ${i}`);
      span.setAttribute('payload', 'x'.repeat(i % 997 === 0 ? 100_000 : (i * 37) % 900));
      span.end();
    }
    const buffers = new Set(queued.ended.map((s) => (s as unknown as EncodedSpan).bytes));
    assert.ok(buffers.size > 10, `${buffers.size} buffers`);
    assert.ok(official(spans.ended).equals(Buffer.from(ours.serializeRequest(queued.ended))));
    for (const at of [0, 511, 1024, 2999]) assert.ok(official([spans.ended[at]!]).equals(Buffer.from(ours.serializeRequest([queued.ended[at]!]))), `span ${at}`);
  });

  it('hands on no span that is not sampled, and none after shutdown (which reaches the batch processor)', async () => {
    const { queued, tracer, provider } = setup(new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0) }));
    tracer.startSpan('not sampled').end();
    assert.equal(queued.ended.length, 0);
    const off = setup(new AlwaysOffSampler());
    off.tracer.startSpan('off').end();
    assert.equal(off.queued.ended.length, 0);

    const on = setup();
    const late = on.tracer.startSpan('late');
    await on.provider.shutdown();
    assert.equal(on.queued.shutdowns, 1);
    late.end();
    assert.equal(on.queued.ended.length, 0);
    await provider.shutdown();
  });
});
