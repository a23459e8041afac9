import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { inputRound, modernPost } from '../helpers/modern-http.js';
import { startOtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { textOf } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

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
    // Kept per upstream identity (read after initialize, not before it).
    assert.equal(upstream.attributes['mcp.protocol.version'], '2025-11-25');
    assert.equal(upstream.attributes['switchboard.upstream.era'], 'legacy');

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
    const server = only(spans, (s) => s.kind === SERVER && s.service.startsWith('switchboard'), 'gateway SERVER span');
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
    const server = only(spans, (s) => s.kind === SERVER && s.service.startsWith('switchboard'), 'gateway SERVER span');
    assert.equal(server.attributes['switchboard.error.code'], 'SWB_UPSTREAM_CRASHED');
    const upstream = only(spans, (s) => s.kind === CLIENT, 'CLIENT span');
    assert.equal(upstream.attributes['error.type'], 'SWB_UPSTREAM_CRASHED');
    assert.equal(upstream.parentSpanId, server.spanId);
    await client.close();
  });
});

describe('tracing: a queued call and an open circuit', () => {
  let receiver: Receiver;
  let gw: RunningGateway;

  before(async () => {
    receiver = await startOtlpReceiver();
    const base = gatewayConfig(receiver, 'http/json');
    // One call at a time; the first failure opens the circuit (the hang tool times out after 400 ms).
    const upstream = { ...base.upstreams[0]!, concurrency: { max: 1, queue: 8, queueTimeoutMs: 10_000 }, circuitBreaker: { failureThreshold: 1, resetTimeoutMs: 60_000 } };
    gw = await startGateway({ ...base, upstreams: [upstream] });
  });
  after(async () => {
    await gw?.close();
    await receiver?.close();
  });

  it("a call waiting for a slot has an INTERNAL 'upstream queue' span under its request span; the next call meets the open circuit, an event on its span", async () => {
    const hanging = await connect(gw);
    const hang = hanging.callTool({ name: 'hang', arguments: {} }).then(
      () => assert.fail('the hang call should time out'),
      () => 'timed out',
    );
    await until('the hang call holds the only slot', () => gw.app.gateway.pools.get('traced')!.inflight === 1);
    const queuedTrace = hex(16);
    const queued = await connect(gw, { traceparent: traceparent(queuedTrace, hex(8)) });
    const waited = queued.callTool({ name: 'echo-trace', arguments: {} }).then(
      () => 'answered',
      (e: Error) => e.message,
    );
    assert.equal(await hang, 'timed out');
    // The timeout opened the circuit: the queued call, now let through, is refused by it or ran first.
    await waited;
    await gw.app.tracing.flush();
    const spans = await receiver.trace(queuedTrace, (x) => x.some((y) => y.name === 'upstream queue'));
    const server = only(spans, (x) => x.kind === SERVER && x.name === 'tools/call echo-trace', 'request span');
    const queue = only(spans, (x) => x.name === 'upstream queue', 'queue span');
    assert.equal(queue.kind, 1, 'INTERNAL');
    assert.equal(queue.parentSpanId, server.spanId);
    assert.equal(queue.attributes['switchboard.upstream.name'], 'traced');

    const refusedTrace = hex(16);
    const refused = await connect(gw, { traceparent: traceparent(refusedTrace, hex(8)) });
    await assert.rejects(refused.callTool({ name: 'echo-trace', arguments: {} }), /failing; calls are paused/);
    await gw.app.tracing.flush();
    const after = await receiver.trace(refusedTrace, (x) => x.some((y) => y.kind === SERVER && y.name === 'tools/call echo-trace'));
    const span = only(after, (x) => x.kind === SERVER && x.name === 'tools/call echo-trace', 'refused request span');
    assert.equal(span.status.code, ERROR);
    assert.equal(span.attributes['switchboard.error.code'], 'SWB_CIRCUIT_OPEN');
    assert.ok(span.events.some((e) => e.name === 'upstream.circuit_open' && e.attributes['switchboard.upstream.name'] === 'traced'), JSON.stringify(span.events));
    assert.ok(!after.some((x) => x.service === 'traced-fixture' && x.name.includes('echo-trace')), 'nothing reached the upstream');
    await Promise.all([hanging, queued, refused].map((c) => c.close()));
  });
});

/** A traced gateway (spans as OTLP/HTTP JSON to a receiver of its own) in front of the dual-era fixture, whose tools ask mid-call. */
async function fixtureGateway(): Promise<{ receiver: Receiver; gw: RunningGateway }> {
  const receiver = await startOtlpReceiver();
  const gw = await startGateway({
    tracing: { enabled: true, endpoint: receiver.url, protocol: 'http/json' },
    tenants: [{ name: 'anonymous', endpoints: ['*'] }],
    upstreams: [{ name: 'conf', transport: 'stdio' as const, ...FIXTURE }],
    endpoints: [{ path: '/mcp', upstreams: ['conf'] }],
  });
  return { receiver, gw };
}

describe('tracing: a 2026-07-28 request answered input_required', () => {
  it('the request span (the whole exchange, retries included) records each round: mcp.input_required with its number of questions', async () => {
    const { receiver, gw } = await fixtureGateway();
    try {
      const trace = hex(16);
      // Moves the client's ids ahead of the gateway's exchange numbers (discovery starts no exchange).
      for (let i = 0; i < 3; i++) assert.equal((await modernPost(gw.url('/mcp'), 'server/discover', {})).status, 200);
      const a = await modernPost(gw.url('/mcp'), 'tools/call', { name: 'test_elicitation', arguments: { message: 'who are you?' } }, { headers: { traceparent: traceparent(trace, hex(8)) } });
      assert.equal(a.body.result?.resultType, 'input_required', JSON.stringify(a.body));
      // The user answers; the held upstream call completes, and with it the request's span.
      const round = inputRound(a);
      const done = await modernPost(gw.url('/mcp'), 'tools/call', {
        name: 'test_elicitation',
        arguments: { message: 'who are you?' },
        requestState: round.state,
        inputResponses: { [round.key]: { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } } },
      });
      assert.match(JSON.stringify(done.body.result), /username/);
      await gw.app.tracing.flush();
      const spans = await receiver.trace(trace, (x) => x.some((y) => y.kind === SERVER && y.name === 'tools/call test_elicitation'));
      const server = only(spans, (x) => x.kind === SERVER && x.name === 'tools/call test_elicitation', 'request span');
      const asked = server.events.find((e) => e.name === 'mcp.input_required');
      assert.ok(asked, JSON.stringify(server.events));
      assert.equal(asked.attributes['mcp.input_requests'], 1);
      assert.equal(server.attributes['switchboard.era'], 'modern');
      // The client's own id (the first attempt's), not the number the gateway's side knows the exchange by.
      assert.equal(server.attributes['jsonrpc.request.id'], String(a.body.id));
      assert.equal(server.status.code, 0, 'asking is no failure');
    } finally {
      await gw.close();
      await receiver.close();
    }
  });
});

describe("tracing: a 2025 session's client asked mid-call", () => {
  it("the upstream's elicitation/create relayed to the client is a CLIENT span under the call's request span, with the user's action", async () => {
    const { receiver, gw } = await fixtureGateway();
    const trace = hex(16);
    const client = new Client({ name: 'tracing-test', version: '1' }, { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'decline' }));
    try {
      await client.connect(new StreamableHTTPClientTransport(gw.url('/mcp'), { requestInit: { headers: { traceparent: traceparent(trace, hex(8)) } } }));
      const answer = await client.callTool({ name: 'test_elicitation', arguments: { message: 'who are you?' } });
      assert.match(textOf(answer), /action=decline/);
      await gw.app.tracing.flush();
      const spans = await receiver.trace(trace, (x) => x.some((y) => y.name === 'elicitation/create'));
      const server = only(spans, (x) => x.kind === SERVER && x.name === 'tools/call test_elicitation', 'request span');
      const asked = only(spans, (x) => x.name === 'elicitation/create', 'elicitation span');
      assert.equal(asked.kind, CLIENT);
      assert.equal(asked.parentSpanId, server.spanId, 'a child of the call that caused it');
      assert.equal(asked.attributes['mcp.method.name'], 'elicitation/create');
      assert.equal(asked.attributes['mcp.session.id'], server.attributes['mcp.session.id']);
      assert.equal(asked.attributes['mcp.elicitation.action'], 'decline');
      assert.equal(asked.status.code, 0, 'a declined question is an answer, not a failure');
      assert.ok(!JSON.stringify(asked.attributes).includes('who are you'), 'the question is never recorded');
    } finally {
      await client.close();
      await gw.close();
      await receiver.close();
    }
  });

  it("a client's answer with an action of its own making is recorded as _OTHER, not as the client wrote it (found by a review)", async () => {
    // The action is the client's: recorded as sent, a megabyte of it was a span attribute (the SDK's cut
    // at 4096 characters keeps the whole string alive for as long as the span waits to be exported).
    const { receiver, gw } = await fixtureGateway();
    const trace = hex(16);
    const client = new Client({ name: 'tracing-test', version: '1' }, { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'decline' }));
    try {
      const transport = new StreamableHTTPClientTransport(gw.url('/mcp'), { requestInit: { headers: { traceparent: traceparent(trace, hex(8)) } } });
      await client.connect(transport);
      // The SDK client sends only the actions the schema knows: its answer is rewritten on the way out.
      const send = transport.send.bind(transport);
      transport.send = (m, o) => send('result' in m && (m.result as { action?: unknown }).action === 'decline' ? { ...m, result: { action: 'x'.repeat(100_000) } } : m, o);
      await client.callTool({ name: 'test_elicitation', arguments: { message: 'who are you?' } }).catch(() => undefined);
      await gw.app.tracing.flush();
      const spans = await receiver.trace(trace, (x) => x.some((y) => y.name === 'elicitation/create'));
      const asked = only(spans, (x) => x.name === 'elicitation/create', 'elicitation span');
      assert.equal(asked.attributes['mcp.elicitation.action'], '_OTHER');
    } finally {
      await client.close();
      await gw.close();
      await receiver.close();
    }
  });
});

describe('tracing: a call forwarded to the replica that owns its session', () => {
  let receiver: Receiver;
  let redis: TestRedis;
  const gateways: RunningGateway[] = [];

  before(async () => {
    receiver = await startOtlpReceiver();
    redis = await startRedis();
    for (const name of ['a', 'b']) {
      const base = gatewayConfig(receiver, 'http/json');
      gateways.push(await startGateway({ ...base, tracing: { ...base.tracing, serviceName: `switchboard-${name}` }, store: { redis: { url: redis.url, keyPrefix: 'trace:' } } }));
    }
  });
  after(async () => {
    for (const g of gateways) await g.close().catch(() => {});
    await redis?.stop();
    await receiver?.close();
  });

  it("one trace across the replicas: the forwarding replica's CLIENT span is the owner's parent, the upstream's span below", async () => {
    const [a, b] = gateways as [RunningGateway, RunningGateway];
    const transport = new StreamableHTTPClientTransport(a.url('/mcp'));
    const client = new Client({ name: 'tracing-forward', version: '1' });
    await client.connect(transport);
    try {
      const clientTrace = hex(16);
      const clientSpan = hex(8);
      // The session is A's; the call lands on B (a load balancer's choice), which forwards it to A.
      const res = await fetch(b.url('/mcp'), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': transport.sessionId!,
          'mcp-protocol-version': '2025-11-25',
          traceparent: traceparent(clientTrace, clientSpan),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo-trace', arguments: {} } }),
      });
      assert.equal(res.status, 200);
      assert.match(await res.text(), /traceparent/);
      await Promise.all(gateways.map((g) => g.app.tracing.flush()));
      const spans = await receiver.trace(clientTrace, (s) => s.some((x) => x.service === 'traced-fixture') && s.some((x) => x.name === 'forward'));

      const forward = only(spans, (s) => s.name === 'forward', 'forward span');
      assert.equal(forward.service, 'switchboard-b');
      assert.equal(forward.kind, CLIENT);
      assert.equal(forward.parentSpanId, clientSpan, "the client's HTTP context is the forward's parent");
      assert.equal(forward.attributes['switchboard.forward.outcome'], 'relayed');
      assert.equal(typeof forward.attributes['switchboard.forward.owner'], 'string');
      const server = only(spans, (s) => s.kind === SERVER && s.service.startsWith('switchboard'), 'gateway SERVER span');
      assert.equal(server.service, 'switchboard-a', 'the owner served it');
      assert.equal(server.parentSpanId, forward.spanId, 'the owner continued the forward span');
      const upstream = only(spans, (s) => s.kind === CLIENT && s.name !== 'forward' && s.service.startsWith('switchboard'), 'upstream CLIENT span');
      assert.equal(upstream.service, 'switchboard-a');
      assert.equal(upstream.parentSpanId, server.spanId);
      const fixture = only(spans, (s) => s.service === 'traced-fixture', 'upstream span');
      assert.equal(fixture.parentSpanId, upstream.spanId);
    } finally {
      await client.close();
    }
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

describe('tracing: the batch processor and span limit variables', () => {
  it('OTEL_BSP_MAX_EXPORT_BATCH_SIZE exports a full batch at once; OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT caps attributes', async () => {
    const receiver = await startOtlpReceiver();
    // Read when tracing starts (the SDK's trace package reads none of them itself). The scheduled export is
    // ten minutes away, so spans reach the receiver before the wait below ends only because a batch of
    // one is full as soon as a span ends (the SDK's defaults would wait five seconds).
    const set = { OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '1', OTEL_BSP_SCHEDULE_DELAY: '600000', OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT: '3' };
    const saved = Object.fromEntries(Object.keys(set).map((k) => [k, process.env[k]]));
    Object.assign(process.env, set);
    let gw: RunningGateway | undefined;
    try {
      gw = await startGateway(gatewayConfig(receiver, 'http/json'));
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
    try {
      const trace = hex(16);
      const client = await connect(gw, { traceparent: traceparent(trace, hex(8)) });
      await client.callTool({ name: 'echo-trace', arguments: {} });
      await client.close();
      // No flush: the batch size alone sends them.
      const spans = await receiver.trace(trace, (s) => s.some((x) => x.kind === CLIENT) && s.some((x) => x.kind === SERVER && x.service === 'switchboard'), 2500);
      const server = only(spans, (s) => s.kind === SERVER && s.service === 'switchboard', 'SERVER span');
      assert.equal(Object.keys(server.attributes).length, 3, JSON.stringify(server.attributes));
      assert.equal(server.attributes['mcp.method.name'], 'tools/call', 'the first attributes given are the ones kept');
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
      // Type imports are erased: only a module that loads OpenTelemetry at run time counts.
      if (/^import (?!type )[^;]*from '@opentelemetry\//m.test(text) && !file.endsWith('otel-tracing.ts')) offenders.push(`${file} imports @opentelemetry`);
      // The modules otel-tracing.ts brings with it are imported by tracing's modules only.
      const tracingOnly = ['otel-tracing.ts', 'encoded-span-processor.ts', 'otlp-trace-serializer.ts'];
      if (/^import (?!type )[^;]*from '\.\/(encoded-span-processor|otlp-trace-serializer)\.js'/m.test(text) && !tracingOnly.some((t) => file.endsWith(t))) offenders.push(`${file} imports a module loaded with tracing only`);
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
