// How long a request's SSE stream waits before it is resumed (resume-pace.ts). The upstream's retry: is
// honoured, but as a delay setTimeout can keep: Node fires a longer one (over 2^31 - 1 ms, about 24.8
// days) after 1 ms, with a TimeoutOverflowWarning each time, so `retry: 99999999999` had the gateway
// resume the stream in a tight loop, a GET a millisecond, for as long as the call lasted.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { resumeDelay } from '../../../src/upstream/resume-pace.js';

const MAX_TIMER_MS = 2 ** 31 - 1;

describe("the wait before a stream is resumed, from the upstream's retry: (found by a review)", () => {
  it('a retry: beyond what a timer can wait is waited as long as a timer can, never after 1 ms', async () => {
    for (const empty of [0, 1, 5]) assert.equal(resumeDelay(99_999_999_999, empty), MAX_TIMER_MS);
    // What that delay does with Node's own timer: no overflow warning (which fires it at once).
    const warnings: string[] = [];
    const onWarning = (w: Error) => void warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const ac = new AbortController();
      const waited = delay(resumeDelay(99_999_999_999, 1), 'fired', { signal: ac.signal }).catch(() => 'aborted');
      await new Promise((r) => setImmediate(r));
      ac.abort();
      assert.equal(await waited, 'aborted');
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(warnings.filter((w) => w === 'TimeoutOverflowWarning'), []);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('ordinary values: retry: honoured (at least 50 ms: before 2026-12-07 retry: 0 was kept while resumes brought an event id), else doubling up to 5 s', () => {
    assert.equal(resumeDelay(0, 0), 50);
    assert.equal(resumeDelay(0, 2), 50);
    assert.equal(resumeDelay(3000, 1), 3000);
    assert.equal(resumeDelay(undefined, 0), 100);
    assert.equal(resumeDelay(undefined, 10), 5000);
  });
});
