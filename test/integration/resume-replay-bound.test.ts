// A resuming reader whose backlog is larger than server.maxStreamBufferBytes: the replay goes out in
// slices the socket takes (it is catching up, not slow), and a replay that is cut or left on the way
// binds nothing, delivers nothing and keeps the log for the next attempt (found by a review, 2026-12-04).
import assert from 'node:assert/strict';
import { mkdtempSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { openSession, post } from '../helpers/http-edge.js';
import { waitFor } from '../helpers/wait.js';

const FLOOD = { name: 'flood', transport: 'stdio' as const, command: process.execPath, args: [resolve('test/fixtures/flood-server.mjs')], sandbox: 'none' as const, sharing: 'shared' as const };

/** GET + Last-Event-ID; returns status, the body read to its end (or cut), the ids seen, and whether it was cut. */
async function resume(gw: RunningGateway, sid: string, version: string, lastEventId: string) {
  const res = await fetch(gw.url('/mcp'), { headers: { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': version, 'last-event-id': lastEventId }, signal: AbortSignal.timeout(10_000) });
  let text = '';
  let cut = false;
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += dec.decode(value, { stream: true });
    }
  } catch {
    cut = true;
  }
  return { status: res.status, text, cut };
}

describe('resuming a POST stream whose log is larger than maxStreamBufferBytes', () => {
  let gw: RunningGateway;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'swb-replay-'));
    gw = await startGateway({ server: { responseMode: 'sse', maxStreamBufferBytes: 65536 }, upstreams: [FLOOD], endpoints: [{ path: '/mcp', upstreams: ['flood'] }] });
  });
  after(async () => {
    await gw?.close();
  });

  it('the answer can still be obtained by resuming (the log is not dropped by a cut replay)', async () => {
    const s = await openSession(gw, '2025-11-25');
    const done = join(dir, 'done1');
    const ac = new AbortController();
    const res = await post(gw, { jsonrpc: '2.0', id: 'f', method: 'tools/call', params: { name: 'flood', arguments: { count: 100, bytes: 1024, doneFile: done, delayMs: 300 }, _meta: { progressToken: 'p' } } }, { sid: s.sid, version: s.version, signal: ac.signal });
    assert.equal(res.status, 200);
    // Read up to the priming event's id, then drop the stream.
    const reader = res.body!.getReader();
    let head = '';
    while (!/id: (\S+)\ndata: \n\n/.test(head)) head += new TextDecoder().decode((await reader.read()).value);
    const primingId = /id: (\S+)\n/.exec(head)![1]!;
    ac.abort();
    assert.ok(await waitFor(() => existsSync(done), { timeoutMs: 10_000 }));
    // The answer is logged while the reader is away.
    const [no, seq] = primingId.split('_').map(Number) as [number, number];
    await waitFor(async () => ((await gw.app.gateway.events.replay(s.sid, no, seq)) ?? []).some((e) => e.data.includes('flooded 100')), { timeoutMs: 10_000 });

    // The client resumes; then, as any client does after a cut, again from the last id it saw.
    const attempts: Array<{ status: number; cut: boolean; events: number; answer: boolean; body: string }> = [];
    let last = primingId;
    for (let i = 0; i < 3; i++) {
      const r = await resume(gw, s.sid, s.version, last);
      const ids = [...r.text.matchAll(/^id: (\S+)$/gm)].map((m) => m[1]!);
      if (ids.length > 0) last = ids.at(-1)!;
      attempts.push({ status: r.status, cut: r.cut, events: ids.length, answer: r.text.includes('flooded 100'), body: r.text.slice(0, 160) } as any);
      if (r.text.includes('flooded 100') || r.status !== 200) break;
      await sleep(50);
    }
    assert.ok(attempts.some((a) => a.answer), `the answer to "f" was never delivered: ${JSON.stringify(attempts)}`);
  });

  it('a replay cut by the buffer bound (one event larger than it) counts no open stream and keeps the log', async () => {
    const s = await openSession(gw, '2025-11-25');
    const done = join(dir, 'done2');
    const ac = new AbortController();
    const res = await post(gw, { jsonrpc: '2.0', id: 'g', method: 'tools/call', params: { name: 'flood', arguments: { count: 2, bytes: 70_000, doneFile: done, delayMs: 300 }, _meta: { progressToken: 'p' } } }, { sid: s.sid, version: s.version, signal: ac.signal });
    const reader = res.body!.getReader();
    let head = '';
    while (!/id: (\S+)\ndata: \n\n/.test(head)) head += new TextDecoder().decode((await reader.read()).value);
    const primingId = /id: (\S+)\n/.exec(head)![1]!;
    ac.abort();
    assert.ok(await waitFor(() => existsSync(done), { timeoutMs: 10_000 }));
    const session = gw.app.gateway.registry.get(s.sid)!;
    await waitFor(() => session.activity.streams === 0, { timeoutMs: 5000 });
    const first = await resume(gw, s.sid, s.version, primingId);
    assert.equal(first.status, 200);
    assert.equal(first.cut, true, 'an event larger than the bound cannot go out');
    await sleep(200);
    assert.equal(session.activity.streams, 0, 'no stream is open, yet the session counts one');
    // The stream and its log are still there: the same Last-Event-ID is answered again (and cut again), not refused.
    const again = await resume(gw, s.sid, s.version, primingId);
    assert.equal(again.status, 200);
    assert.equal(session.activity.streams, 0);
  });
});

describe('the standalone GET stream catching up on more than maxStreamBufferBytes', () => {
  let gw: RunningGateway;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'swb-replay-'));
    gw = await startGateway({ server: { maxStreamBufferBytes: 65536 }, upstreams: [{ ...FLOOD, sharing: 'per-session' as const, pool: { warm: 1 } }], endpoints: [{ path: '/mcp', upstreams: ['flood'] }] });
  });
  after(async () => {
    await gw?.close();
  });

  it('messages logged while no GET stream was open still reach a later GET after a cut catch-up', async () => {
    const s = await openSession(gw, '2025-11-25');
    const done = join(dir, 'done3');
    const started = await post(gw, { jsonrpc: '2.0', id: 'd', method: 'tools/call', params: { name: 'flood', arguments: { count: 100, bytes: 1024, doneFile: done, detached: true } } }, { sid: s.sid, version: s.version });
    assert.match(await started.text(), /flooding/);
    assert.ok(await waitFor(() => existsSync(done), { timeoutMs: 10_000 }));
    // The child has written everything when doneFile appears, but the gateway may still be logging the
    // tail: wait until the log stops growing, so the count compared below is the final one.
    const logLength = async () => ((await gw.app.gateway.events.replay(s.sid, 0, 0)) ?? []).length;
    let previous = -1;
    await waitFor(async () => {
      const now = await logLength();
      const settled = now >= 60 && now === previous;
      previous = now;
      return settled;
    }, { timeoutMs: 10_000, intervalMs: 200 });
    const logged = await logLength();
    const headers = { accept: 'text/event-stream', 'mcp-session-id': s.sid, 'mcp-protocol-version': s.version };
    const seen: number[] = [];
    const how: string[] = [];
    for (let i = 0; i < 3; i++) {
      const ac = new AbortController();
      const res = await fetch(gw.url('/mcp'), { headers, signal: ac.signal });
      let text = '';
      const reader = res.body!.getReader();
      const timer = setTimeout(() => ac.abort(), 500);
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          text += new TextDecoder().decode(value);
        }
      } catch {
        if (!ac.signal.aborted) how.push('cut');
      }
      if (ac.signal.aborted) how.push('open, idle');
      clearTimeout(timer);
      seen.push((text.match(/"logger":"flood"/g) ?? []).length);
      await sleep(100);
    }
    // The first GET catches up on all of them; the ones after it have nothing new.
    assert.equal(seen[0], logged, `the first GET got ${seen[0]} of the ${logged} logged messages (per GET: ${JSON.stringify(seen)}, ${JSON.stringify(how)})`);
    assert.deepEqual(how, ['open, idle', 'open, idle', 'open, idle']);
  });
});
