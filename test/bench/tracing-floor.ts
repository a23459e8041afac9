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
  const round = async (tracing: Tracing): Promise<number> => {
    const t0 = process.cpuUsage();
    for (let i = 0; i < calls; i++) {
      await call(tracing, i);
      // Let the exporter's timers and sockets run, as they would between requests.
      if (i % 64 === 63) await new Promise((r) => setImmediate(r));
    }
    await tracing.flush();
    const u = process.cpuUsage(t0);
    return (u.user + u.system) / calls;
  };

  await round(NO_TRACING);
  await round(traced);
  const off: number[] = [];
  const on: number[] = [];
  for (let r = 0; r < Number(values.rounds); r++) {
    off.push(await round(NO_TRACING));
    on.push(await round(traced));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const added = median(on) - median(off);
  process.stdout.write(`tracing floor (${process.version}): ${calls} calls × ${values.rounds} rounds; the loop alone ${median(off).toFixed(2)} µs/call, traced ${median(on).toFixed(2)} µs/call: tracing adds ${added.toFixed(2)} µs of CPU per call (rounds: ${on.map((x, i) => (x - off[i]!).toFixed(1)).join(' ')})\n`);
  await traced.shutdown();
  sink.disconnect();
}
