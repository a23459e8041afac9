// A client's trace context crosses a trust boundary at the gateway. Continued as it was (the default), the
// client chooses the gateway's trace id (joining its spans to any trace it names), its sampled flag decides
// whether the gateway records and exports the request whatever sampleRatio says (0 included), and its
// baggage and tracestate go on to every upstream in the gateway's own context, as W3C headers too (service
// meshes route and authorize on baggage). Nothing in the config file could stop it: OTEL_TRACES_SAMPLER's
// decide-alone samplers are ignored once the file sets sampleRatio, and none of them held back the trace id
// or the baggage. `tracing.callerContext: link` starts the gateway's own trace and links the client's.
// Found by a review.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { recordedRemoteConfig, startCallRecorder, type CallRecorder } from '../helpers/call-recorder.js';
import { startGateway } from '../helpers/gateway.js';
import { startOtlpReceiver } from '../helpers/otlp-receiver.js';

const hex = (bytes: number) => [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');

/** One tools/call with the client's trace context both as HTTP headers (every POST) and in _meta. */
async function call(base: URL, headers: Record<string, string>, meta: Record<string, unknown>): Promise<void> {
  const client = new Client({ name: 'caller-context', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(base, { requestInit: { headers } }));
  await client.callTool({ name: 'echo', arguments: {}, _meta: meta });
  await client.close();
}

describe('tracing: a client\'s trace context (tracing.callerContext)', () => {
  let upstream: CallRecorder;
  before(async () => {
    upstream = await startCallRecorder();
  });
  after(() => upstream?.close());

  it('link: the gateway starts its own trace, links the client\'s, and sends none of its baggage or tracestate upstream', async () => {
    const receiver = await startOtlpReceiver();
    const gw = await startGateway(recordedRemoteConfig(upstream.url, { enabled: true, endpoint: receiver.url, protocol: 'http/json', callerContext: 'link' }));
    try {
      upstream.calls.length = 0;
      const [httpTrace, httpSpan, metaTrace, metaSpan] = [hex(16), hex(8), hex(16), hex(8)];
      await call(
        gw.url('/mcp'),
        { traceparent: `00-${httpTrace}-${httpSpan}-01`, tracestate: 'vendor=http', baggage: 'tenant=someone-else' },
        { traceparent: `00-${metaTrace}-${metaSpan}-01`, tracestate: 'vendor=meta', baggage: 'role=admin' },
      );
      assert.equal(upstream.calls.length, 1);
      const { headers, meta } = upstream.calls[0]!;
      const sent = /^00-([0-9a-f]{32})-[0-9a-f]{16}-01$/.exec(String(headers.traceparent));
      assert.ok(sent, `the gateway's own context goes upstream: ${headers.traceparent}`);
      const traceId = sent[1]!;
      assert.notEqual(traceId, httpTrace, 'the client chose the gateway\'s trace (HTTP header)');
      assert.notEqual(traceId, metaTrace, 'the client chose the gateway\'s trace (_meta)');
      assert.equal(meta?.traceparent, headers.traceparent);
      for (const where of [headers, meta ?? {}]) {
        assert.equal(where.baggage, undefined, 'the client\'s baggage went upstream');
        assert.equal(where.tracestate, undefined, 'the client\'s tracestate went upstream');
      }
      await gw.app.tracing.flush();
      const server = (await receiver.trace(traceId, (spans) => spans.some((s) => s.kind === 2))).find((s) => s.kind === 2);
      assert.equal(server!.parentSpanId, undefined, 'a root span');
      assert.deepEqual(
        [...server!.links].sort((a, b) => a.traceId.localeCompare(b.traceId)),
        [{ traceId: httpTrace, spanId: httpSpan }, { traceId: metaTrace, spanId: metaSpan }].sort((a, b) => a.traceId.localeCompare(b.traceId)),
      );
    } finally {
      await gw.close();
      await receiver.close();
    }
  });

  it('link: a client\'s sampled flag does not turn sampling on (sampleRatio 0)', async () => {
    const receiver = await startOtlpReceiver();
    const gw = await startGateway(recordedRemoteConfig(upstream.url, { enabled: true, endpoint: receiver.url, protocol: 'http/json', sampleRatio: 0, callerContext: 'link' }));
    try {
      upstream.calls.length = 0;
      await call(gw.url('/mcp'), { traceparent: `00-${hex(16)}-${hex(8)}-01` }, { traceparent: `00-${hex(16)}-${hex(8)}-01` });
      assert.equal(upstream.calls.length, 1);
      assert.match(String(upstream.calls[0]!.headers.traceparent), /^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/, 'the client\'s flag sampled the request');
    } finally {
      await gw.close();
      await receiver.close();
    }
  });

  it('parent (the default): the client\'s context is continued, as before', async () => {
    const receiver = await startOtlpReceiver();
    const gw = await startGateway(recordedRemoteConfig(upstream.url, { enabled: true, endpoint: receiver.url, protocol: 'http/json', sampleRatio: 0 }));
    try {
      upstream.calls.length = 0;
      const metaTrace = hex(16);
      await call(gw.url('/mcp'), {}, { traceparent: `00-${metaTrace}-${hex(8)}-01`, baggage: 'role=admin' });
      const { headers } = upstream.calls[0]!;
      assert.match(String(headers.traceparent), new RegExp(`^00-${metaTrace}-[0-9a-f]{16}-01$`));
      assert.equal(headers.baggage, 'role=admin');
    } finally {
      await gw.close();
      await receiver.close();
    }
  });
});
