import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { startRemotePool, startSdkUpstream, testCaller, type SdkUpstream } from '../../helpers/sdk-http-upstream.js';

/**
 * SSE polling (2025-11-25) with the SDK's server: the tool closes its call's stream (closeSSEStream) `closes`
 * times, each time once the gateway has resumed the one before, optionally after a progress message on it.
 */
async function pollingUpstream(closes: number, progress: boolean): Promise<SdkUpstream> {
  const up: SdkUpstream = await startSdkUpstream(
    (s) => {
      s.tool('poll', {}, async (_args, extra) => {
        // The stream to close is the one resumed i times (the POST's own first); a gateway that gave up never comes.
        const resumed = async (i: number) => {
          for (let waited = 0; up.resumes() < i && waited < 10_000; waited += 10) await new Promise((r) => setTimeout(r, 10).unref());
          await new Promise((r) => setTimeout(r, 30).unref()); // the resumed stream is registered
        };
        for (let i = 0; i < closes; i++) {
          await resumed(i);
          if (progress) await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: `step ${i}` } });
          extra.closeSSEStream?.();
        }
        await resumed(closes);
        return { content: [{ type: 'text', text: 'done' }] };
      });
    },
    { eventStore: new InMemoryEventStore(), retryInterval: 50 },
  );
  return up;
}

describe('a call whose stream the upstream closes (SSE polling) is resumed until its answer (found by a review)', () => {
  for (const [closes, progress] of [
    [2, false],
    [7, true],
    [7, false],
  ] as const) {
    it(`${closes} closes, ${progress ? 'each after a progress message' : 'all but the first on resumed streams that carried no event'}`, async () => {
      const up = await pollingUpstream(closes, progress);
      const gw = await startRemotePool(up.url, { requestTimeoutMs: 8000 });
      try {
        const t0 = performance.now();
        const r = await gw.instance.request('tools/call', { name: 'poll', arguments: {} }, { caller: testCaller });
        assert.deepEqual(r.content, [{ type: 'text', text: 'done' }]);
        assert.equal(up.resumes(), closes);
        // The server's retry: 50 is honoured on every resume, not only on the first.
        assert.ok(performance.now() - t0 < 200 * closes + 1000, `answered after ${Math.round(performance.now() - t0)} ms`);
      } finally {
        await gw.close();
        up.close();
      }
    });
  }
});
