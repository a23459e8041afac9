import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startOtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { textOf } from '../helpers/sdk.js';

const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;
const hex = (bytes: number) => [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');
const traceparent = (traceId: string, spanId: string) => `00-${traceId}-${spanId}-01`;

type Receiver = Awaited<ReturnType<typeof startOtlpReceiver>>;

function gatewayConfig(receiver: Receiver, protocol: 'http/json' | 'http/protobuf') {
  return {
    tracing: { enabled: true, endpoint: receiver.url, protocol, recordPrincipal: true },
    tenants: [{ name: 'anonymous', endpoints: ['*'], tools: { deny: ['forbidden-*'] } }],
    upstreams: [
      {
        name: 'traced',
        transport: 'stdio' as const,
        command: process.execPath,
        args: ['test/fixtures/traced-server.mjs', receiver.url],
        sandbox: 'none' as const,
        // The hang tool's call is given up (and cancelled upstream) after this long.
        requestTimeoutMs: 400,
        restart: { initialDelayMs: 50, maxDelayMs: 200 },
      },
    ],
    endpoints: [{ path: '/mcp', upstreams: ['traced'] }],
  };
}

/** An SDK client whose every HTTP request carries `headers` (a caller that traces its HTTP layer). */
async function connect(gw: RunningGateway, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'tracing-test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(gw.url('/mcp'), { requestInit: { headers } }));
  return client;
}

function only(spans: ReceivedSpan[], pred: (s: ReceivedSpan) => boolean, what: string): ReceivedSpan {
  const found = spans.filter(pred);
  assert.equal(found.length, 1, `exactly one ${what} in ${JSON.stringify(spans.map((s) => s.name))}`);
  return found[0]!;
}

const gatewaySpans = (spans: ReceivedSpan[]) => spans.filter((s) => s.service === 'switchboard');

describe('tracing: spans exported over OTLP/HTTP (JSON) to a real receiver', () => {
  let receiver: Receiver;
  let gw: RunningGateway;
  const logLines: string[] = [];

  before(async () => {
    receiver = await startOtlpReceiver();
    gw = await startGateway(gatewayConfig(receiver, 'http/json'), { logLines });
  });
  after(async () => {
    await gw?.close();
    await receiver?.close();
  });

  it('one trace from the client through the gateway into the upstream, the upstream\'s own span a child', async () => {
    const clientTrace = hex(16);
    const clientSpan = hex(8);
    const client = await connect(gw, { traceparent: traceparent(clientTrace, clientSpan) });
    const result = await client.callTool({ name: 'echo-trace', arguments: { secret: 'argument-value-7f3' } });
    await gw.app.tracing.flush();
    const spans = await receiver.trace(clientTrace, (s) => s.some((x) => x.service === 'traced-fixture') && s.some((x) => x.kind === CLIENT));

    const server = only(spans, (s) => s.kind === SERVER && s.service === 'switchboard', 'gateway SERVER span');
    assert.equal(server.name, 'tools/call echo-trace');
    assert.equal(server.parentSpanId, clientSpan, 'the HTTP traceparent is the parent of the request span');
    assert.equal(server.status.code, 0);
    const a = server.attributes;
    assert.equal(a['mcp.method.name'], 'tools/call');
    assert.equal(a['gen_ai.tool.name'], 'echo-trace');
    assert.equal(a['gen_ai.operation.name'], 'execute_tool');
    assert.equal(typeof a['jsonrpc.request.id'], 'string');
    assert.match(String(a['mcp.session.id']), /^[0-9a-f-]{36}$/);
    assert.equal(typeof a['mcp.protocol.version'], 'string');
    assert.equal(a['network.transport'], 'tcp');
    assert.equal(a['switchboard.tenant'], 'anonymous', 'recordPrincipal: on in this config');

    const upstream = only(spans, (s) => s.kind === CLIENT, 'CLIENT span');
    assert.equal(upstream.name, 'tools/call echo-trace');
    assert.equal(upstream.parentSpanId, server.spanId);
    assert.equal(upstream.attributes['switchboard.upstream.name'], 'traced');
    assert.equal(upstream.attributes['switchboard.upstream.transport'], 'stdio');
    assert.equal(upstream.attributes['switchboard.upstream.instance'], 'traced-1');
    assert.equal(upstream.attributes['network.transport'], 'pipe');
    assert.equal(typeof upstream.attributes['process.pid'], 'number');

    const fixture = only(spans, (s) => s.service === 'traced-fixture', 'upstream span');
    assert.equal(fixture.parentSpanId, upstream.spanId, 'the upstream continued the context it got in params._meta');
    const received = JSON.parse(textOf(result)) as { traceparent: string };
    assert.equal(received.traceparent, traceparent(clientTrace, upstream.spanId));

    // Arguments and results are never recorded.
    assert.doesNotMatch(JSON.stringify(gatewaySpans(receiver.spans)), /argument-value-7f3|traceparent"/);
    // Log lines written inside the span carry its ids (the audit line of the call).
    const audit = logLines.map((l) => JSON.parse(l)).find((l) => l.trace_id === clientTrace && /audit/i.test(JSON.stringify(l)));
    assert.ok(audit, 'the audit line of the call carries the trace id');
    assert.equal(audit.span_id, server.spanId);
    await client.close();
  });

  it('a context in params._meta is the parent; the HTTP one is linked', async () => {
    const metaTrace = hex(16);
    const metaSpan = hex(8);
    const httpTrace = hex(16);
    const httpSpan = hex(8);
    const client = await connect(gw, { traceparent: traceparent(httpTrace, httpSpan) });
    await client.callTool({ name: 'echo-trace', arguments: {}, _meta: { traceparent: traceparent(metaTrace, metaSpan) } });
    await gw.app.tracing.flush();
    const spans = await receiver.trace(metaTrace, (s) => s.some((x) => x.kind === SERVER && x.service === 'switchboard'));
    const server = only(spans, (s) => s.kind === SERVER && s.service === 'switchboard', 'gateway SERVER span');
    assert.equal(server.parentSpanId, metaSpan);
    assert.deepEqual(server.links, [{ traceId: httpTrace, spanId: httpSpan }]);
    await client.close();
  });

  it('a denied call: the request span says so, and nothing reaches the upstream', async () => {
    const trace = hex(16);
    const client = await connect(gw, { traceparent: traceparent(trace, hex(8)) });
    const result = (await client.callTool({ name: 'forbidden-tool', arguments: {} }).catch((err: Error) => err)) as Error;
    assert.ok(result instanceof Error, 'refused');
    await gw.app.tracing.flush();
    const spans = await receiver.trace(trace, (s) => s.length > 0);
    const server = only(spans, (s) => s.kind === SERVER, 'SERVER span');
    assert.equal(server.name, 'tools/call forbidden-tool');
    assert.equal(server.status.code, ERROR);
    assert.match(String(server.attributes['error.type']), /^-32\d{3}$/, 'error.type is the JSON-RPC code');
    assert.equal(server.attributes['rpc.response.status_code'], server.attributes['error.type']);
    assert.deepEqual(server.events.map((e) => e.name), ['policy.denied']);
    assert.equal(spans.filter((s) => s.kind === CLIENT).length, 0);
    await client.close();
  });

  it('an upstream timeout: the CLIENT span fails SWB_UPSTREAM_TIMEOUT and the upstream sees its call cancelled', async () => {
    const trace = hex(16);
    const client = await connect(gw, { traceparent: traceparent(trace, hex(8)) });
    await assert.rejects(client.callTool({ name: 'hang', arguments: {} }));
    await gw.app.tracing.flush();
    const spans = await receiver.trace(trace, (s) => s.some((x) => x.service === 'traced-fixture') && s.some((x) => x.kind === CLIENT));
    const server = only(spans, (s) => s.kind === SERVER && s.service === 'switchboard', 'SERVER span');
    assert.equal(server.status.code, ERROR);
    assert.equal(server.attributes['switchboard.error.code'], 'SWB_UPSTREAM_TIMEOUT');
    const upstream = only(spans, (s) => s.kind === CLIENT, 'CLIENT span');
    assert.equal(upstream.parentSpanId, server.spanId);
    assert.equal(upstream.attributes['error.type'], 'SWB_UPSTREAM_TIMEOUT');
    assert.equal(upstream.status.code, ERROR);
    const fixture = only(spans, (s) => s.service === 'traced-fixture', 'upstream span');
    assert.equal(fixture.parentSpanId, upstream.spanId);
    assert.equal(fixture.status.message, 'cancelled', 'the gateway cancelled the call upstream');
    await client.close();
  });

  it('exemplars: the request-duration histogram names a trace in the OpenMetrics format only', async () => {
    const openMetrics = await (await fetch(gw.app.metricsUrl!, { headers: { accept: 'application/openmetrics-text; version=1.0.0' } })).text();
    const exemplar = /switchboard_request_duration_seconds_bucket\{[^}]*method="tools\/call"[^}]*\} \d+ # \{trace_id="([0-9a-f]{32})",span_id="([0-9a-f]{16})"\}/.exec(openMetrics);
    assert.ok(exemplar, 'a tools/call bucket carries an exemplar');
    assert.ok(receiver.spans.some((s) => s.traceId === exemplar[1] && s.spanId === exemplar[2] && s.kind === SERVER), 'the exemplar is a request span');
    const text = await (await fetch(gw.app.metricsUrl!)).text();
    assert.doesNotMatch(text, /# \{trace_id=/);
  });

  it('an upstream crash: the CLIENT and SERVER spans fail SWB_UPSTREAM_CRASHED', async () => {
    const trace = hex(16);
    const client = await connect(gw, { traceparent: traceparent(trace, hex(8)) });
    await assert.rejects(client.callTool({ name: 'crash', arguments: {} }));
    await gw.app.tracing.flush();
    const spans = await receiver.trace(trace, (s) => s.some((x) => x.kind === CLIENT));
    const server = only(spans, (s) => s.kind === SERVER, 'SERVER span');
    assert.equal(server.attributes['switchboard.error.code'], 'SWB_UPSTREAM_CRASHED');
    const upstream = only(spans, (s) => s.kind === CLIENT, 'CLIENT span');
    assert.equal(upstream.attributes['error.type'], 'SWB_UPSTREAM_CRASHED');
    assert.equal(upstream.parentSpanId, server.spanId);
    await client.close();
  });
});

describe('tracing: OTLP/HTTP protobuf', () => {
  it('exports the same span tree as application/x-protobuf', async () => {
    const receiver = await startOtlpReceiver();
    const gw = await startGateway(gatewayConfig(receiver, 'http/protobuf'));
    try {
      const trace = hex(16);
      const client = await connect(gw, { traceparent: traceparent(trace, hex(8)) });
      await client.callTool({ name: 'echo-trace', arguments: {} });
      await client.close();
      await gw.app.tracing.flush();
      const spans = await receiver.trace(trace, (s) => s.some((x) => x.kind === CLIENT) && s.some((x) => x.service === 'traced-fixture'));
      assert.ok(receiver.contentTypes.includes('application/x-protobuf'));
      const server = only(spans, (s) => s.kind === SERVER && s.service === 'switchboard', 'SERVER span');
      const upstream = only(spans, (s) => s.kind === CLIENT, 'CLIENT span');
      assert.equal(server.attributes['gen_ai.tool.name'], 'echo-trace');
      assert.equal(upstream.parentSpanId, server.spanId);
      assert.equal(only(spans, (s) => s.service === 'traced-fixture', 'upstream span').parentSpanId, upstream.spanId);
    } finally {
      await gw.close();
      await receiver.close();
    }
  });
});

describe('tracing off', () => {
  it('no module outside otel-tracing.ts imports OpenTelemetry, and that one only dynamically', () => {
    const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
    const offenders: string[] = [];
    for (const file of files('src')) {
      const text = readFileSync(file, 'utf8');
      if (/from '@opentelemetry\//.test(text) && !file.endsWith('otel-tracing.ts')) offenders.push(`${file} imports @opentelemetry`);
      if (/from '\.\/otel-tracing\.js'/.test(text)) offenders.push(`${file} imports otel-tracing.ts statically`);
    }
    assert.deepEqual(offenders, []);
  });

  it('the upstream gets no trace context the client did not send', async () => {
    const receiver = await startOtlpReceiver();
    const config = gatewayConfig(receiver, 'http/json');
    const gw = await startGateway({ ...config, tracing: { enabled: false } });
    try {
      const client = await connect(gw, { traceparent: traceparent(hex(16), hex(8)) });
      const result = await client.callTool({ name: 'echo-trace', arguments: {} });
      assert.deepEqual(JSON.parse(textOf(result)), {});
      assert.equal(gw.app.tracing.enabled, false);
      await client.close();
    } finally {
      await gw.close();
      await receiver.close();
    }
  });
});
