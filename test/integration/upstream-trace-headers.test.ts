// The W3C trace headers the gateway sends a remote upstream. They mirror the trace context in a request's
// params._meta, which is the gateway's own when it traces the request (upstream-span.ts); but they were
// read from whatever _meta the message held, so with tracing off (the default), or on a request no span
// covers, a client's own _meta traceparent, tracestate and baggage became HTTP headers of the gateway's
// request: a client-chosen baggage (which service meshes route and authorize on) reached the upstream's
// HTTP layer, and a malformed traceparent (version ff, all-zero ids) was sent as well. Found by a review.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { recordedRemoteConfig, startCallRecorder, type CallRecorder } from '../helpers/call-recorder.js';
import { startGateway } from '../helpers/gateway.js';
import { startOtlpReceiver } from '../helpers/otlp-receiver.js';

const hex = (bytes: number) => [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');

const CLIENT_META = { traceparent: `ff-${'0'.repeat(32)}-${'0'.repeat(16)}-01`, tracestate: 'vendor=client-chosen', baggage: 'tenant=someone-else,role=admin' };

async function call(base: URL, meta: Record<string, unknown>): Promise<void> {
  const client = new Client({ name: 'trace-headers', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(base));
  await client.callTool({ name: 'echo', arguments: {}, _meta: meta });
  await client.close();
}

describe('trace headers to a remote upstream', () => {
  let upstream: CallRecorder;
  before(async () => {
    upstream = await startCallRecorder();
  });
  after(() => upstream?.close());

  it('with tracing off, a client\'s _meta trace fields are not made HTTP headers of the request upstream', async () => {
    const gw = await startGateway(recordedRemoteConfig(upstream.url, { enabled: false }));
    try {
      upstream.calls.length = 0;
      await call(gw.url('/mcp'), { ...CLIENT_META, traceparent: `00-${hex(16)}-${hex(8)}-01` });
      await call(gw.url('/mcp'), CLIENT_META);
      assert.equal(upstream.calls.length, 2);
      for (const { headers } of upstream.calls) {
        assert.equal(headers.traceparent, undefined);
        assert.equal(headers.tracestate, undefined);
        assert.equal(headers.baggage, undefined);
      }
    } finally {
      await gw.close();
    }
  });

  it('with tracing on, the headers are the gateway\'s context, the same as the _meta it sends', async () => {
    const receiver = await startOtlpReceiver();
    const gw = await startGateway(recordedRemoteConfig(upstream.url, { enabled: true, endpoint: receiver.url, protocol: 'http/json' }));
    try {
      upstream.calls.length = 0;
      const traceId = hex(16);
      await call(gw.url('/mcp'), { traceparent: `00-${traceId}-${hex(8)}-01`, tracestate: 'vendor=v1' });
      assert.equal(upstream.calls.length, 1);
      const { headers, meta } = upstream.calls[0]!;
      assert.match(String(headers.traceparent), new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
      assert.equal(headers.traceparent, meta?.traceparent);
      assert.equal(headers.tracestate, 'vendor=v1');
      assert.equal(headers.baggage, undefined);
    } finally {
      await gw.close();
      await receiver.close();
    }
  });
});
