// A remote upstream (Streamable HTTP) that ends the session's GET stream at once with a new event id (a priming
// event) every time it is reopened, and never a message on it. A new id counted as progress: the waits started over
// each time, and the gateway reopened the stream every 250 ms for the session's whole life. Now only a delivered
// message is progress: idle reopenings back off to 30 s (the session is not failed: a GET stream is long-lived),
// with one warning. A real loopback server; the transport's clock is virtual (test/helpers/virtual-clock.ts), so the
// test checks the waits the gateway chose, not how many GETs fit in a wall-clock window.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import { createLogger } from '../../../src/observability/logger.js';
import { getStreamUpstream, initializedTransport } from '../../helpers/get-stream-upstream.js';
import { virtualClock } from '../../helpers/virtual-clock.js';

/** Reopenings looked at: enough for the waits to reach their 30 s cap and stay there. */
const REOPENINGS = 12;
const note = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });

/** The waits between `REOPENINGS + 1` GET streams each ending as `end` makes it, the warnings, and what came. */
async function reopenings(end: (res: ServerResponse, n: number) => void): Promise<{ waits: number[]; gets: number; warnings: string[]; notes: number; closed: boolean }> {
  let gets = 0;
  const up = await getStreamUpstream((_req, res) => void end(res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's1' }), ++gets));
  const warnings: string[] = [];
  const log = createLogger('warn', { write: (line: string) => void warnings.push(line) });
  const clock = virtualClock(REOPENINGS);
  const { t, received, close } = await initializedTransport(up, log, clock);
  let closed = false;
  t.onclose = () => (closed = true);
  let poll: NodeJS.Timeout | undefined;
  try {
    // Bounded by GETs too: code whose waits are not the clock's does not hang the test.
    await Promise.race([clock.reached, new Promise<void>((r) => (poll = setInterval(() => gets > 4 * REOPENINGS && r(), 10)))]);
    return { waits: clock.waits, gets, warnings, notes: received.filter((m) => 'method' in m).length, closed };
  } finally {
    clearInterval(poll);
    await close();
  }
}

describe('the GET stream of a remote upstream ended at once, each time with a new event id and no message', () => {
  it('is reopened after waits doubling from 250 ms to 30 s, the session kept, with one warning', async () => {
    const r = await reopenings((res, n) => res.end(`id: g${n}\ndata:\n\n`));
    // Before: 250 ms every time (a new id started the waits over), a GET 4 times a second for the session's life.
    assert.deepEqual(r.waits, [250, 500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000, 30000, 30000]);
    assert.equal(r.gets, REOPENINGS + 1);
    assert.equal(r.closed, false);
    assert.equal(r.warnings.filter((l) => l.includes('without a message')).length, 1, r.warnings.join('\n'));
  });

  it('bringing a message each time, is reopened after 250 ms each time, without a warning (as a proxy cutting idle streams)', async () => {
    const r = await reopenings((res, n) => res.end(`id: g${n}\ndata: ${note}\n\n`));
    assert.deepEqual(r.waits, Array(REOPENINGS).fill(250));
    assert.equal(r.notes, REOPENINGS + 1);
    assert.deepEqual(r.warnings, []);
  });

  it("waits at least the upstream's last `retry:` before each reopening, kept until it sends another", async () => {
    // The first stream says retry: 5000, the next two say nothing (the reconnection time stays), the fourth says 100.
    const retry = (n: number) => (n === 1 ? 'retry: 5000\n' : n === 4 ? 'retry: 100\n' : '');
    const r = await reopenings((res, n) => res.end(`${retry(n)}id: g${n}\ndata: ${note}\n\n`));
    // Before 2026-12-07: 250 ms every time, whatever the upstream asked.
    assert.deepEqual(r.waits, [5000, 5000, 5000, ...Array(REOPENINGS - 3).fill(250)]);
    assert.equal(r.notes, REOPENINGS + 1);
  });

  it('idle, backs off above a short `retry:` and never waits less than a long one', async () => {
    const r = await reopenings((res, n) => res.end(`retry: 3000\nid: g${n}\ndata:\n\n`));
    assert.deepEqual(r.waits, [3000, 3000, 3000, 3000, 4000, 8000, 16000, 30000, 30000, 30000, 30000, 30000]);
    const long = await reopenings((res, n) => res.end(`retry: 99999999999\nid: g${n}\ndata: ${note}\n\n`));
    // At most what a timer can wait: a longer delay fires after 1 ms in Node.
    assert.deepEqual(long.waits.slice(0, 2), [2 ** 31 - 1, 2 ** 31 - 1]);
  });
});
