/**
 * What `tracing.sampleRatio` decides for the traces the gateway starts, and that a caller's own sampled
 * flag is followed whatever the ratio: the ends of the range use samplers that do not read the trace id
 * (AlwaysOn, AlwaysOff), which must decide exactly as the ratio sampler would.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadTracing } from '../../../src/observability/load-tracing.js';
import { createLogger } from '../../../src/observability/logger.js';
import type { Tracing } from '../../../src/observability/tracing.js';

const PARENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const sampledParent = { traceparent: `00-${PARENT_TRACE}-b7ad6b7169203331-01` };
const unsampledParent = { traceparent: `00-${PARENT_TRACE}-b7ad6b7169203331-00` };

async function withTracing(sampleRatio: number | undefined, fn: (t: Tracing) => void, env: NodeJS.ProcessEnv = {}): Promise<void> {
  // Port 9 (discard): what is exported fails quietly; only the sampling decisions are looked at.
  const tracing = await loadTracing({ enabled: true, endpoint: 'http://127.0.0.1:9/', protocol: 'http/protobuf', sampleRatio, headers: {}, recordPrincipal: false }, createLogger('silent'), env);
  try {
    fn(tracing);
  } finally {
    await tracing.shutdown().catch(() => {});
  }
}

/** Whether a SERVER span with this _meta records, and the trace flags it sends upstream. */
function decide(t: Tracing, meta: unknown): { recorded: boolean; flags: string; traceId: string } {
  const span = t.server('tools/call echo', meta, { 'mcp.method.name': 'tools/call' });
  const carrier: Record<string, unknown> = {};
  const recorded = span.run(() => t.activeIds() !== undefined);
  span.inject(carrier);
  span.end();
  const [, traceId, , flags] = String(carrier.traceparent).split('-');
  return { recorded, flags: flags!, traceId: traceId! };
}

describe('trace sampling', () => {
  it('at sampleRatio 0 records none of the traces the gateway starts, and still propagates their context', async () => {
    await withTracing(0, (t) => {
      for (let i = 0; i < 20; i++) {
        const d = decide(t, undefined);
        assert.equal(d.recorded, false);
        assert.equal(d.flags, '00');
        assert.match(d.traceId, /^[0-9a-f]{32}$/);
      }
    });
  });

  it('at sampleRatio 1 records every trace the gateway starts', async () => {
    await withTracing(1, (t) => {
      for (let i = 0; i < 20; i++) assert.deepEqual({ ...decide(t, undefined), traceId: '' }, { recorded: true, flags: '01', traceId: '' });
    });
  });

  it("follows the caller's sampled flag at either end of the range", async () => {
    for (const ratio of [0, 1]) {
      await withTracing(ratio, (t) => {
        assert.deepEqual(decide(t, sampledParent), { recorded: true, flags: '01', traceId: PARENT_TRACE }, `ratio ${ratio}, sampled parent`);
        assert.deepEqual(decide(t, unsampledParent), { recorded: false, flags: '00', traceId: PARENT_TRACE }, `ratio ${ratio}, unsampled parent`);
      });
    }
  });

  it('at a ratio between samples some traces and not others', async () => {
    await withTracing(0.5, (t) => {
      const recorded = Array.from({ length: 200 }, () => decide(t, undefined).recorded).filter(Boolean).length;
      // Binomial(200, 0.5): outside 60–140 with a probability below 1e-8.
      assert.ok(recorded > 60 && recorded < 140, `${recorded} of 200 recorded`);
    });
  });

  it("OTEL_TRACES_SAMPLER without parentbased_ decides alone: a caller's sampled flag does not turn always_off on, nor its unsampled flag always_on off (found by a review)", async () => {
    await withTracing(undefined, (t) => {
      assert.equal(decide(t, sampledParent).recorded, false, 'always_off, sampled parent');
      assert.equal(decide(t, undefined).recorded, false, 'always_off, new trace');
    }, { OTEL_TRACES_SAMPLER: 'always_off' });
    await withTracing(undefined, (t) => assert.equal(decide(t, unsampledParent).recorded, true, 'always_on, unsampled parent'), { OTEL_TRACES_SAMPLER: 'always_on' });
    await withTracing(undefined, (t) => assert.equal(decide(t, sampledParent).recorded, false, 'traceidratio 0, sampled parent'), { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' });
    // The parentbased_ forms, and a ratio the config file sets, follow the caller.
    await withTracing(undefined, (t) => assert.equal(decide(t, sampledParent).recorded, true, 'parentbased_always_off, sampled parent'), { OTEL_TRACES_SAMPLER: 'parentbased_always_off' });
    await withTracing(0, (t) => assert.equal(decide(t, sampledParent).recorded, true, 'sampleRatio 0 in the file, sampled parent'), { OTEL_TRACES_SAMPLER: 'always_off' });
  });
});
