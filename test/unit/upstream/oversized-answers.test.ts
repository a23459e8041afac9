import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import type { StreamableHTTPServerTransportOptions } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { startRemotePool, startSdkUpstream, testCaller } from '../../helpers/sdk-http-upstream.js';

// A tool whose answer is over http.maxMessageBytes (4 KiB here) on an upstream otherwise well: the answer
// is the tool's problem, not the upstream's health. A breaker that counted it opened after two such calls
// and paused every other tool of the upstream.
const limits = { http: { maxMessageBytes: 4096 }, circuitBreaker: { failureThreshold: 2, resetTimeoutMs: 60_000 }, requestTimeoutMs: 5000 };

const answers: [string, Partial<StreamableHTTPServerTransportOptions>][] = [
  ['a JSON answer', { enableJsonResponse: true }],
  ['an SSE answer', {}],
  ['an SSE answer on a resumable stream (a resume replays the event)', { eventStore: new InMemoryEventStore(), retryInterval: 20 }],
];

describe('an answer over http.maxMessageBytes fails its call as SWB_RESULT_TOO_LARGE and leaves the circuit closed (found by a review)', () => {
  for (const [what, options] of answers) {
    it(what, async () => {
      const up = await startSdkUpstream((s) => {
        s.tool('big', {}, async () => ({ content: [{ type: 'text', text: 'x'.repeat(10_000) }] }));
        s.tool('small', {}, async () => ({ content: [{ type: 'text', text: 'ok' }] }));
      }, options);
      const gw = await startRemotePool(up.url, limits);
      try {
        for (let i = 0; i < 4; i++) {
          await assert.rejects(gw.instance.request('tools/call', { name: 'big', arguments: {} }, { caller: testCaller }), (err: { code?: string; message: string }) => {
            assert.equal(err.code, 'SWB_RESULT_TOO_LARGE', err.message);
            assert.match(err.message, /4096 bytes \(http\.maxMessageBytes\)/);
            return true;
          });
        }
        assert.equal(gw.instance.circuit, 'closed');
        const r = await gw.instance.request('tools/call', { name: 'small', arguments: {} }, { caller: testCaller });
        assert.deepEqual(r.content, [{ type: 'text', text: 'ok' }]);
      } finally {
        await gw.close();
        up.close();
      }
    });
  }
});
