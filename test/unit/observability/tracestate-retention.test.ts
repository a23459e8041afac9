/**
 * A client's `tracestate` (a header, or params._meta, which may be as large as the request body) is kept
 * on the spans of its request as OpenTelemetry keeps it: at most 512 characters of list members. The
 * SDK's TraceState holds its whole raw text besides, and a sampled span waiting in the export queue
 * (OTLP/JSON queues the spans themselves) would keep every client's megabytes alive: the queue bounds
 * spans by count, not bytes (found by a review).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { loadTracing } from '../../../src/observability/load-tracing.js';
import { createLogger } from '../../../src/observability/logger.js';
import { startOtlpReceiver } from '../../helpers/otlp-receiver.js';

const PARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const LARGE = 2 * 1024 * 1024;
const SPANS = 24;

describe('a client-sized tracestate', () => {
  it('is not kept whole by the spans waiting for their export; its well-formed members still go upstream', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const collector = await startOtlpReceiver();
    // A schedule delay that keeps the spans queued until the shutdown exports them.
    const tracing = await loadTracing({ enabled: true, endpoint: collector.url, protocol: 'http/json', sampleRatio: 1, headers: {}, recordPrincipal: false }, createLogger('silent'), { OTEL_BSP_SCHEDULE_DELAY: '600000' });
    try {
      gc();
      const before = process.memoryUsage().heapUsed;
      let sent: unknown;
      for (let i = 0; i < SPANS; i++) {
        // As a request body gives it: a flat string of the client's size.
        const meta = JSON.parse(JSON.stringify({ traceparent: PARENT, tracestate: `congo=t61rcWkgMzE,rojo=${i},${'x'.repeat(LARGE)}` }));
        const span = tracing.server('tools/call echo', meta, { 'mcp.method.name': 'tools/call' });
        const carrier: Record<string, unknown> = {};
        span.inject(carrier);
        sent = carrier.tracestate;
        span.end();
      }
      gc();
      const kept = process.memoryUsage().heapUsed - before;
      assert.equal(sent, `congo=t61rcWkgMzE,rojo=${SPANS - 1}`);
      // Whole, the queued spans held SPANS × 2 MB (48 MB); their compact lists are a few kilobytes.
      assert.ok(kept < (SPANS * LARGE) / 4, `${(kept / 1048576).toFixed(1)} MB still held after ${SPANS} spans with a ${LARGE / 1048576} MB tracestate each`);
      await tracing.shutdown();
      assert.deepEqual(new Set(collector.spans.map((s) => s.name)), new Set(['tools/call echo']));
      assert.equal(collector.spans.length, SPANS);
    } finally {
      await tracing.shutdown().catch(() => {});
      await collector.close();
    }
  });
});
