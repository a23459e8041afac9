import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, checkDocument, parseConfig } from '../../../src/config/load.js';
import { DEFAULT_ATTRIBUTE_VALUE_LENGTH, resolveTracing, sdkDisabled } from '../../../src/observability/tracing-options.js';

const base = { upstreams: [{ name: 'a', transport: 'stdio', command: 'node' }], endpoints: [{ path: '/mcp', upstreams: ['a'] }] };

function problems(tracing: unknown): string[] {
  try {
    parseConfig({ ...base, tracing }, 'test.yaml', {}, '/base');
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.problems;
  }
  assert.fail('accepted');
}

describe('tracing config', () => {
  it('is off by default, principal not recorded, no headers', () => {
    const t = parseConfig(base, 'test.yaml', {}, '/base').tracing;
    assert.deepEqual(t, { enabled: false, headers: {}, recordPrincipal: false, callerContext: 'parent' });
  });

  it('refuses what would not work, naming the key', () => {
    assert.match(problems({ endpoint: 'grpc://collector:4317' }).join('\n'), /^tracing\.endpoint: .*http:\/\/ or https:\/\//m);
    assert.match(problems({ protocol: 'grpc' }).join('\n'), /^tracing\.protocol: /m);
    assert.match(problems({ sampleRatio: 1.5 }).join('\n'), /^tracing\.sampleRatio: /m);
    assert.match(problems({ callerContext: 'trust' }).join('\n'), /^tracing\.callerContext: /m);
    assert.match(problems({ headers: { 'x-key': 'a\r\nInjected: 1' } }).join('\n'), /^tracing\.headers\.x-key: .*line breaks/m);
    assert.match(problems({ headers: { 'bad name': 'v' } }).join('\n'), /^tracing\.headers\.bad name: .*header name/m);
    assert.match(problems({ enable: true }).join('\n'), /tracing.*enable/);
  });

  it('warns when on with nowhere to send spans, unless OTEL_EXPORTER_OTLP_ENDPOINT says where', () => {
    const on = { ...base, tracing: { enabled: true } };
    assert.ok(checkDocument(on, 'test.yaml', {}, '/base').warnings.some((w) => w.startsWith('tracing.endpoint: not set')));
    // configWarnings reads process.env for the OTEL_* variables, as serve would.
    const saved = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = 'http://collector:4318';
    try {
      assert.ok(!checkDocument(on, 'test.yaml', {}, '/base').warnings.some((w) => w.startsWith('tracing.')));
    } finally {
      if (saved === undefined) delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
      else process.env.OTEL_EXPORTER_OTLP_ENDPOINT = saved;
    }
  });

  it('no warning about the endpoint when OTEL_SDK_DISABLED=true turns tracing off (found by a review)', () => {
    const on = { ...base, tracing: { enabled: true } };
    const saved = process.env.OTEL_SDK_DISABLED;
    process.env.OTEL_SDK_DISABLED = 'true';
    try {
      assert.ok(!checkDocument(on, 'test.yaml', {}, '/base').warnings.some((w) => w.startsWith('tracing.endpoint')));
    } finally {
      if (saved === undefined) delete process.env.OTEL_SDK_DISABLED;
      else process.env.OTEL_SDK_DISABLED = saved;
    }
  });

  it('an OTEL_TRACES_SAMPLER it does not know is said, and the default used (found by a review)', () => {
    const o = { enabled: true, headers: {}, recordPrincipal: false };
    const r = resolveTracing(o, { OTEL_TRACES_SAMPLER: 'jaeger_remote' });
    assert.equal(r.sampleRatio, 1);
    assert.equal(r.parentBased, true);
    assert.equal(r.notes.length, 1);
    assert.match(r.notes[0]!, /OTEL_TRACES_SAMPLER="jaeger_remote" is not supported.*parentbased_always_on/);
    assert.deepEqual(resolveTracing(o, { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' }).notes, []);
  });

  it('the file wins over OTEL_* variables, which fill what it leaves out', () => {
    const o = { enabled: true, headers: {}, recordPrincipal: false };
    const env = { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' };
    assert.deepEqual({ ...resolveTracing(o, env), notes: [] }, { url: undefined, protocol: 'http/json', sampleRatio: 0.25, parentBased: true, serviceName: undefined, headers: {}, recordPrincipal: false, linkCallers: false, batch: {}, limits: { attributeValueLengthLimit: DEFAULT_ATTRIBUTE_VALUE_LENGTH }, notes: [] });
    const r = resolveTracing({ ...o, endpoint: 'http://c:4318/', protocol: 'http/protobuf', sampleRatio: 1 }, env);
    assert.equal(r.url, 'http://c:4318/v1/traces');
    assert.equal(r.protocol, 'http/protobuf');
    assert.equal(r.sampleRatio, 1);
    assert.equal(resolveTracing(o, { OTEL_TRACES_SAMPLER: 'always_off' }).sampleRatio, 0);
    const bad = resolveTracing(o, { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_TRACES_SAMPLER_ARG: 'lots' });
    assert.equal(bad.protocol, 'http/protobuf');
    assert.equal(bad.sampleRatio, 1);
    assert.equal(bad.notes.length, 2);
    assert.equal(sdkDisabled({ OTEL_SDK_DISABLED: 'true' }), true);
    assert.equal(sdkDisabled({}), false);
  });

  it('reads the batch processor and span limit variables, which the SDK trace package leaves to its caller', () => {
    const o = { enabled: true, headers: {}, recordPrincipal: false };
    const r = resolveTracing(o, {
      OTEL_BSP_SCHEDULE_DELAY: '200',
      OTEL_BSP_EXPORT_TIMEOUT: '10000',
      OTEL_BSP_MAX_QUEUE_SIZE: '4096',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: ' 128 ',
      OTEL_ATTRIBUTE_COUNT_LIMIT: '64',
      OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT: '256',
      OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '9999',
      OTEL_SPAN_EVENT_COUNT_LIMIT: '0',
      OTEL_SPAN_LINK_COUNT_LIMIT: '8',
      OTEL_LINK_ATTRIBUTE_COUNT_LIMIT: '2',
    });
    assert.deepEqual(r.batch, { scheduledDelayMillis: 200, exportTimeoutMillis: 10000, maxQueueSize: 4096, maxExportBatchSize: 128 });
    // The span variable wins over the general one, which also stands for event and link attributes; a
    // count of 0 keeps none (the spec allows it).
    assert.deepEqual(r.limits, { attributeCountLimit: 64, attributeValueLengthLimit: 256, eventCountLimit: 0, linkCountLimit: 8, attributePerEventCountLimit: 64, attributePerLinkCountLimit: 2 });
    assert.deepEqual(r.notes, []);
  });

  it('an export timeout of 0 is none; a value past what a timer takes is clamped', () => {
    const o = { enabled: true, headers: {}, recordPrincipal: false };
    assert.equal(resolveTracing(o, { OTEL_BSP_EXPORT_TIMEOUT: '0' }).batch.exportTimeoutMillis, 2 ** 31 - 1);
    const big = resolveTracing(o, { OTEL_BSP_SCHEDULE_DELAY: '3000000000', OTEL_BSP_EXPORT_TIMEOUT: '99999999999' });
    assert.deepEqual(big.batch, { scheduledDelayMillis: 2 ** 31 - 1, exportTimeoutMillis: 2 ** 31 - 1 });
    assert.equal(big.notes.length, 2);
  });

  it('an unusable batch or limit variable is said and treated as not set', () => {
    const o = { enabled: true, headers: {}, recordPrincipal: false };
    const r = resolveTracing(o, { OTEL_BSP_MAX_QUEUE_SIZE: 'lots', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '0x40', OTEL_BSP_SCHEDULE_DELAY: '-5', OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT: '0', OTEL_SPAN_LINK_COUNT_LIMIT: '1.5', OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT: '1e3' });
    assert.deepEqual(r.batch, {});
    // Unusable variables are not set: the default length limit stands.
    assert.deepEqual(r.limits, { attributeValueLengthLimit: DEFAULT_ATTRIBUTE_VALUE_LENGTH });
    assert.equal(r.notes.length, 6);
    assert.match(r.notes.join('\n'), /OTEL_BSP_MAX_QUEUE_SIZE="lots" is not a whole number/);
    // A span variable that is unusable falls through to the general one.
    assert.equal(resolveTracing(o, { OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT: 'x', OTEL_ATTRIBUTE_COUNT_LIMIT: '10' }).limits.attributeCountLimit, 10);
    // The general count stands for three limits: unusable, it is said once.
    assert.equal(resolveTracing(o, { OTEL_ATTRIBUTE_COUNT_LIMIT: 'many' }).notes.length, 1);
  });

  it('a batch larger than the queue (given or the default 512) is the queue\'s size, and said', () => {
    const o = { enabled: true, headers: {}, recordPrincipal: false };
    const big = resolveTracing(o, { OTEL_BSP_MAX_QUEUE_SIZE: '100', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '500' });
    assert.deepEqual(big.batch, { maxQueueSize: 100, maxExportBatchSize: 100 });
    assert.match(big.notes.join('\n'), /larger than the queue/);
    const small = resolveTracing(o, { OTEL_BSP_MAX_QUEUE_SIZE: '100' });
    assert.deepEqual(small.batch, { maxQueueSize: 100, maxExportBatchSize: 100 });
    assert.match(small.notes.join('\n'), /512, the default/);
  });
});
