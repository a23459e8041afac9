// What tracing keeps out of spans, against a real OTLP receiver: argument values and the tenant (error
// messages quote them; a span's status carries the code instead), a client's stale trace fields beside
// the gateway's traceparent, and client-sized names and URIs (bounded). Also that a collector that never
// answers does not hold a stopping gateway for the exporter's whole timeout. Found by a review, 2026-12-04.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { EmptyResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { rawPost, rawSession } from '../helpers/raw-mcp.js';
import { textOf } from '../helpers/sdk.js';
import { waitFor } from '../helpers/wait.js';

const SERVER = 2;
const hex = (bytes: number) => [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');
const traceparent = (traceId: string, spanId: string) => `00-${traceId}-${spanId}-01`;
type Receiver = Awaited<ReturnType<typeof startOtlpReceiver>>;

async function connect(gw: RunningGateway, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'tracing-privacy', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(gw.url('/mcp'), { requestInit: { headers } }));
  return client;
}

describe('tracing: privacy and propagation', () => {
  let receiver: Receiver;
  let gw: RunningGateway;

  before(async () => {
    receiver = await startOtlpReceiver();
    gw = await startGateway({
      tracing: { enabled: true, endpoint: receiver.url, protocol: 'http/json' },
      tenants: [{ name: 'anonymous', endpoints: ['*'], limits: { concurrentRequests: 1 }, arguments: [{ name: 'secret-under-data', tools: ['*'], paths: { arguments: ['secret'], under: ['/srv/data'] } }] }],
      upstreams: [{ name: 'traced', transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/traced-server.mjs', receiver.url], sandbox: 'none' as const, requestTimeoutMs: 15_000 }],
      endpoints: [{ path: '/mcp', upstreams: ['traced'] }],
    });
  });
  after(async () => {
    await gw?.close();
    await receiver?.close();
  });

  it('an argument rule refusal records no argument value in the span (README: "Arguments and results are never recorded")', async () => {
    const trace = hex(16);
    const client = await connect(gw, { traceparent: traceparent(trace, hex(8)) });
    await assert.rejects(client.callTool({ name: 'echo-trace', arguments: { secret: '/home/alice/argument-value-7f3' } }), /Argument rule/);
    await gw.app.tracing.flush();
    const spans = await receiver.trace(trace, (s) => s.some((x) => x.kind === SERVER));
    const server = spans.find((s) => s.kind === SERVER)!;
    assert.doesNotMatch(JSON.stringify(server), /argument-value-7f3/, `status: ${JSON.stringify(server.status)}`);
    await client.close();
  });

  it("the upstream gets no tracestate that is not its traceparent's: a client's _meta tracestate without a (valid) traceparent is not passed on beside the gateway's", async () => {
    const httpTrace = hex(16);
    const client = await connect(gw, { traceparent: traceparent(httpTrace, hex(8)) });
    // An invalid traceparent in _meta (all-zero trace id): the gateway parents on the HTTP header instead.
    const bad = `00-${'0'.repeat(32)}-${hex(8)}-01`;
    const result = await client.callTool({ name: 'echo-trace', arguments: {}, _meta: { traceparent: bad, tracestate: 'rogue=client-state' } });
    const received = JSON.parse(textOf(result)) as { traceparent?: string; tracestate?: string };
    assert.match(received.traceparent ?? '', new RegExp(`^00-${httpTrace}-`), 'the gateway\'s traceparent (in the HTTP header\'s trace) went upstream');
    assert.equal(received.tracestate, undefined, `tracestate ${JSON.stringify(received.tracestate)} went upstream with traceparent ${received.traceparent}`);
    await client.close();
  });

  it("the upstream gets no baggage member the W3C grammar refuses: a client's member with control characters in its properties is left out", async () => {
    const client = await connect(gw);
    // Properties (after ";") were passed on as the client wrote them: NUL, CR and LF included. Keys and values are re-encoded.
    const baggage = 'good=1;prop=x,evil=2;\u0000meta\r\nx-injected: 1,paren(key)=3,also=4;p1;p2=v';
    const result = await client.callTool({ name: 'echo-trace', arguments: {}, _meta: { traceparent: traceparent(hex(16), hex(8)), baggage } });
    const received = JSON.parse(textOf(result)) as { baggage?: string };
    const members = (received.baggage ?? '').split(',').sort();
    assert.deepEqual(members, ['also=4;p1;p2=v', 'good=1;prop=x'], `baggage ${JSON.stringify(received.baggage)} went upstream`);
    await client.close();
  });

  // Before the concurrent-request test: an unknown method takes a slot, and that test's held call keeps
  // one until its upstream timeout (closing an SDK client ends no session).
  it('a client-sized method is cut in the span name and mcp.method.name (the SDK cuts attribute values, not span names)', async () => {
    const trace = hex(16);
    const client = await connect(gw, { traceparent: traceparent(trace, hex(8)) });
    await assert.rejects(client.request({ method: `m/${'m'.repeat(200_000)}`, params: {} }, EmptyResultSchema), (err: { code?: number }) => err.code === -32601);
    await gw.app.tracing.flush();
    const spans = await receiver.trace(trace, (s) => s.some((x) => x.kind === SERVER));
    const server = spans.find((s) => s.kind === SERVER)!;
    assert.ok(server.name.length <= 300, `span name of ${server.name.length} characters`);
    const method = String(server.attributes['mcp.method.name']);
    assert.ok(method.length <= 300, `mcp.method.name of ${method.length} characters`);
    assert.ok(server.name.startsWith('m/mmm') && server.name.endsWith('…'), 'a cut method is marked');
    await client.close();
  });

  it('without recordPrincipal no span names the tenant: a concurrent-request refusal (README: tenant only with recordPrincipal)', async () => {
    const holder = await connect(gw);
    const hang = holder.callTool({ name: 'hang', arguments: {} }, undefined, { timeout: 60_000 }).catch(() => 'ended');
    assert.ok(await waitFor(() => gw.app.gateway.pools.get('traced')!.inflight === 1, { timeoutMs: 10_000 }), 'the holding call never reached the upstream');
    const trace = hex(16);
    const client = await connect(gw, { traceparent: traceparent(trace, hex(8)) });
    await assert.rejects(client.callTool({ name: 'echo-trace', arguments: {} }), /requests in flight/);
    await gw.app.tracing.flush();
    const spans = await receiver.trace(trace, (s) => s.some((x) => x.kind === SERVER));
    const server = spans.find((s) => s.kind === SERVER)!;
    assert.equal(server.attributes['switchboard.tenant'], undefined, 'recordPrincipal is off');
    assert.doesNotMatch(JSON.stringify(server), /anonymous/, `status: ${JSON.stringify(server.status)}`);
    await holder.close(); // its session ends: the held call is cancelled and its slot given back
    await hang;
    await client.close();
  });
  it('a refusal records its code as the status: the gateway code or the JSON-RPC name', async () => {
    const trace = hex(16);
    const client = await connect(gw, { traceparent: traceparent(trace, hex(8)) });
    await assert.rejects(client.callTool({ name: 'echo-trace', arguments: { secret: '/home/alice/x' } }), /Argument rule/);
    await assert.rejects(client.callTool({ name: 'no-such-tool-5e1', arguments: {} }));
    await gw.app.tracing.flush();
    const spans = await receiver.trace(trace, (s) => s.filter((x) => x.kind === SERVER).length >= 2);
    const statuses = spans.filter((s) => s.kind === SERVER).map((s) => s.status.message).sort();
    assert.equal(statuses.length, 2);
    for (const m of statuses) assert.match(m ?? '', /^(SWB_[A-Z_]+|Invalid params|Method not found|Server error|error -?\d+)$/);
    assert.doesNotMatch(JSON.stringify(statuses), /no-such-tool-5e1/);
    await client.close();
  });

  it('a client-sized tool name and resource URI are cut in the span (the export queue counts spans, not bytes)', async () => {
    const trace = hex(16);
    const client = await connect(gw, { traceparent: traceparent(trace, hex(8)) });
    await assert.rejects(client.callTool({ name: 'n'.repeat(200_000), arguments: {} }));
    await assert.rejects(client.readResource({ uri: `file:///${'u'.repeat(200_000)}` }));
    await gw.app.tracing.flush();
    const spans = await receiver.trace(trace, (s) => s.filter((x) => x.kind === SERVER).length >= 2);
    for (const s of spans) {
      assert.ok(s.name.length <= 300, `span name of ${s.name.length} characters`);
      for (const [k, v] of Object.entries(s.attributes)) assert.ok(String(v).length <= 4096, `${k}: ${String(v).length} characters`);
    }
    const tool = spans.find((s) => s.attributes['gen_ai.tool.name'] !== undefined);
    assert.ok(String(tool?.attributes['gen_ai.tool.name']).endsWith('…'), 'a cut name is marked');
    await client.close();
  });

  it('a client-sized request id is cut in jsonrpc.request.id, as a name is (found by a review)', async () => {
    const trace = hex(16);
    const sid = await rawSession(gw.base);
    const answer = await rawPost(gw.base, { jsonrpc: '2.0', id: 'i'.repeat(200_000), method: 'tools/list' }, sid, { traceparent: traceparent(trace, hex(8)) });
    assert.equal(answer.status, 200);
    await gw.app.tracing.flush();
    const spans = await receiver.trace(trace, (s) => s.some((x) => x.kind === SERVER));
    const id = String(spans.find((s) => s.kind === SERVER)!.attributes['jsonrpc.request.id']);
    assert.ok(id.length <= 300 && id.endsWith('…'), `jsonrpc.request.id of ${id.length} characters`);
  });
});

describe("tracing: an upstream's error data", () => {
  it("an upstream's own data.code is neither the span's status nor switchboard.error.code (the gateway's SWB_ codes are; found by a review)", async () => {
    // Read as the gateway's code, a hostile upstream's megabyte data.code was the span's status message,
    // which no attribute limit cuts: every such call exported a span that large.
    const receiver = await startOtlpReceiver();
    const gw = await startGateway({
      tracing: { enabled: true, endpoint: receiver.url, protocol: 'http/json' },
      upstreams: [{ name: 'bad', transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/error-data-server.mjs'], sandbox: 'none' as const }],
      endpoints: [{ path: '/mcp', upstreams: ['bad'] }],
    });
    try {
      const trace = hex(16);
      const client = await connect(gw, { traceparent: traceparent(trace, hex(8)) });
      await assert.rejects(client.callTool({ name: 'fail', arguments: { size: 100_000 } }));
      await gw.app.tracing.flush();
      const spans = await receiver.trace(trace, (s) => s.some((x) => x.kind === SERVER));
      const server = spans.find((s) => s.kind === SERVER)!;
      assert.ok(JSON.stringify(server).length < 10_000, `a span of ${JSON.stringify(server).length} bytes; status ${String(server.status.message).slice(0, 40)}…`);
      assert.equal(server.attributes['switchboard.error.code'], undefined);
      await client.close();
    } finally {
      await gw.close();
      await receiver.close();
    }
  });
});

describe('tracing: a collector that never answers', () => {
  it('holds a stopping gateway for at most a few seconds, not the exporter\'s whole timeout', async () => {
    const server = createServer(() => {});
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const gw = await startGateway({
      tracing: { enabled: true, endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, protocol: 'http/protobuf' },
      upstreams: [{ name: 'traced', transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/traced-server.mjs'], sandbox: 'none' as const }],
      endpoints: [{ path: '/mcp', upstreams: ['traced'] }],
    });
    try {
      const client = await connect(gw);
      await client.callTool({ name: 'echo-trace', arguments: {} });
      await client.close();
      const t0 = Date.now();
      await gw.close();
      // The exporter's own timeout is 10 s; the gateway gives the last export 3 s.
      assert.ok(Date.now() - t0 < 8000, `close took ${Date.now() - t0} ms`);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
