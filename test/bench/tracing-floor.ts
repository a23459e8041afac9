/**
 * `npm run bench:tracing-floor [-- --calls 200000 --rounds 5]`
 *
 * What tracing costs per call by itself, with nothing else of the gateway around it: the gateway's own
 * tracing (loadTracing, the OpenTelemetry SDK it starts, OTLP/HTTP protobuf to a sink in another process)
 * driven with exactly the spans one proxied tools/call makes, the same names and attributes (a SERVER span
 * for the client's request, run as the active span; a CLIENT span for the upstream request, its context
 * injected into the upstream's params._meta, run as the active span; both ended, every span sampled).
 * Against the same loop with tracing off (NO_TRACING), in alternating rounds. The difference is the
 * floor tracing puts under the gateway's CPU per call (bench:paired -- HEAD HEAD+traced): whatever the
 * gateway does, a traced call costs at least this much more.
 *
 * A third loop (`raw` in the output) makes the same two spans with the official packages alone, written
 * out here without any of the gateway's code (its own TracerProvider, batch processor, OTLP protobuf
 * exporter, AsyncLocalStorage context manager and W3C propagator, configured as otel-tracing.ts does): what
 * the official SDK costs by itself, so that the gateway's wrapper is not mistaken for the SDK or the
 * other way round.
 */
import { fork } from 'node:child_process';
import { parseArgs } from 'node:util';
import { createLogger } from '../../src/observability/logger.js';
import { loadTracing } from '../../src/observability/load-tracing.js';
import { ATTR, mcpSpanName, requestAttributes } from '../../src/observability/trace-attributes.js';
import { NO_TRACING, type Tracing } from '../../src/observability/tracing.js';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '200000' }, rounds: { type: 'string', default: '5' }, sink: { type: 'boolean', default: false } } });

if (values.sink) {
  // The OTLP receiver, in a process of its own so that its CPU is not counted.
  const { createServer } = await import('node:http');
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  server.listen(0, '127.0.0.1', () => process.send!((server.address() as { port: number }).port));
  process.on('disconnect', () => process.exit(0));
} else {
  await main();
}

async function main(): Promise<void> {
  const sink = fork(new URL(import.meta.url).pathname, ['--sink'], { execArgv: process.execArgv });
  const port = await new Promise<number>((resolve) => sink.once('message', (m) => resolve(m as number)));
  const traced = await loadTracing({ enabled: true, endpoint: `http://127.0.0.1:${port}`, protocol: 'http/protobuf', sampleRatio: 1, headers: {}, recordPrincipal: false }, createLogger('silent'), {});
  const calls = Number(values.calls);
  const params = { name: 'echo', arguments: { message: 'hello' } };
  const instance = { [ATTR.upstream]: 'up', [ATTR.upstreamInstance]: 'up-1', [ATTR.upstreamTransport]: 'stdio', [ATTR.networkTransport]: 'pipe' };

  /** One call's tracing, as the trace stage and the upstream request do it (see trace-stage.ts, upstream-span.ts). */
  const call = async (tracing: Tracing, id: number): Promise<void> => {
    const server = tracing.server(mcpSpanName('tools/call', params), undefined, {
      ...requestAttributes('tools/call', params),
      [ATTR.jsonrpcRequestId]: String(id),
      [ATTR.mcpSession]: 'b2f0c1d2-6f0e-4d8a-9c1b-3e5f7a9b1c2d',
      [ATTR.mcpProtocolVersion]: '2025-11-25',
      [ATTR.networkTransport]: 'tcp',
      [ATTR.networkProtocol]: 'http',
      [ATTR.endpoint]: '/mcp',
      [ATTR.era]: 'legacy',
    });
    await server.run(async () => {
      const client = tracing.client(mcpSpanName('tools/call', params), { ...requestAttributes('tools/call', params), ...instance });
      const meta: Record<string, unknown> = {};
      client?.inject(meta);
      await (client ? client.run(() => Promise.resolve({ ...params, _meta: meta })) : Promise.resolve(params));
      client?.end();
    });
    server.end();
  };
  const raw = await rawSdkCall(`http://127.0.0.1:${port}/v1/traces`, params, instance);
  const round = async (tracing: Tracing | typeof raw): Promise<number> => {
    const t0 = process.cpuUsage();
    for (let i = 0; i < calls; i++) {
      await (tracing === raw ? raw.call(i) : call(tracing as Tracing, i));
      // Let the exporter's timers and sockets run, as they would between requests.
      if (i % 64 === 63) await new Promise((r) => setImmediate(r));
    }
    await tracing.flush();
    const u = process.cpuUsage(t0);
    return (u.user + u.system) / calls;
  };

  await round(NO_TRACING);
  await round(traced);
  await round(raw);
  const off: number[] = [];
  const on: number[] = [];
  const bare: number[] = [];
  for (let r = 0; r < Number(values.rounds); r++) {
    off.push(await round(NO_TRACING));
    on.push(await round(traced));
    bare.push(await round(raw));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const added = median(on) - median(off);
  const rawAdded = median(bare) - median(off);
  process.stdout.write(`tracing floor (${process.version}): ${calls} calls × ${values.rounds} rounds; the loop alone ${median(off).toFixed(2)} µs/call, traced ${median(on).toFixed(2)} µs/call: tracing adds ${added.toFixed(2)} µs of CPU per call (rounds: ${on.map((x, i) => (x - off[i]!).toFixed(1)).join(' ')})\n`);
  process.stdout.write(`raw (the official SDK alone, no gateway code): ${median(bare).toFixed(2)} µs/call, adds ${rawAdded.toFixed(2)} µs of CPU per call (rounds: ${bare.map((x, i) => (x - off[i]!).toFixed(1)).join(' ')})\n`);
  await traced.shutdown();
  await raw.shutdown();
  sink.disconnect();
}

/**
 * The same call's two spans made with the official packages directly: nothing of src/ is used, so the
 * figure is the SDK's own. Configured like otel-tracing.ts (ratio sampler under a parent-based one,
 * batch processor with its defaults, protobuf over HTTP, ALS contexts, W3C trace context and baggage).
 */
async function rawSdkCall(url: string, params: { name: string; arguments: Record<string, unknown> }, instance: Record<string, string>) {
  const { ROOT_CONTEXT, SpanKind, trace, defaultTextMapSetter } = await import('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } = await import('@opentelemetry/core');
  const { BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider } = await import('@opentelemetry/sdk-trace');
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  const provider = new TracerProvider({
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(1) }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url }) })],
  });
  const tracer = provider.getTracer('floor', '0.0.0');
  const contexts = new AsyncLocalStorageContextManager().enable();
  const propagator = new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] });
  const name = `tools/call ${params.name}`;
  const call = async (id: number): Promise<void> => {
    const server = tracer.startSpan(name, { kind: SpanKind.SERVER }, contexts.active());
    server.setAttributes({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': params.name,
      'gen_ai.operation.name': 'execute_tool',
      'jsonrpc.request.id': String(id),
      'mcp.session.id': 'b2f0c1d2-6f0e-4d8a-9c1b-3e5f7a9b1c2d',
      'mcp.protocol.version': '2025-11-25',
      'network.transport': 'tcp',
      'network.protocol.name': 'http',
      'switchboard.endpoint': '/mcp',
      'switchboard.era': 'legacy',
    });
    const serverContext = trace.setSpan(ROOT_CONTEXT, server);
    await contexts.with(serverContext, async () => {
      const client = tracer.startSpan(name, { kind: SpanKind.CLIENT }, contexts.active());
      client.setAttributes({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': params.name, 'gen_ai.operation.name': 'execute_tool', ...instance });
      const clientContext = trace.setSpan(serverContext, client);
      const meta: Record<string, unknown> = {};
      propagator.inject(clientContext, meta, defaultTextMapSetter);
      await contexts.with(clientContext, () => Promise.resolve({ ...params, _meta: meta }));
      client.end();
    });
    server.end();
  };
  return { call, flush: () => provider.forceFlush(), shutdown: () => provider.shutdown() };
}
