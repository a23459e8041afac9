// The answers written to a live reader and kept for session.answerGraceMs (so a client whose network
// dropped can resume with the priming event's id) were bounded by count alone, 64 a session: 64 answers
// of up to maxResultBytes (8 MiB) each, ~512 MiB a session held in memory outside eventBytesPerSession
// (found by a review, 2026-12-06). They are now bounded by bytes as well, the oldest let go first.
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { openSession, post } from '../helpers/http-edge.js';

const FLOOD = { name: 'flood', transport: 'stdio' as const, command: process.execPath, args: [resolve('test/fixtures/flood-server.mjs')], sandbox: 'none' as const, sharing: 'shared' as const };
const BOUND = 262_144;
const ANSWER = 100_000;
const CALLS = 6;

function sample(text: string, name: string, labels: Record<string, string>): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

describe('answers kept for a resuming reader are bounded by session.eventBytesPerSession', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      server: { responseMode: 'sse' },
      session: { eventBytesPerSession: BOUND, answerGraceMs: 60_000 },
      upstreams: [FLOOD],
      endpoints: [{ path: '/mcp', upstreams: ['flood'] }],
    });
  });
  after(async () => {
    await gw?.close();
  });

  it('large answers read live push the oldest kept ones out, which a resume is then refused as for any stream let go', async () => {
    const s = await openSession(gw, '2025-11-25');
    const primings: string[] = [];
    for (let i = 0; i < CALLS; i++) {
      const message = String(i).repeat(ANSWER);
      const res = await post(gw, { jsonrpc: '2.0', id: `big${i}`, method: 'tools/call', params: { name: 'echo', arguments: { message } } }, { sid: s.sid, version: s.version });
      assert.equal(res.status, 200);
      const text = await res.text(); // read to its end: the answer went to a live reader
      assert.ok(text.includes(message), `call ${i} answered in full`);
      primings.push(/^id: (\S+)$/m.exec(text)![1]!);
    }
    const statuses: number[] = [];
    let keptBytes = 0;
    for (const [i, id] of primings.entries()) {
      const r = await fetch(gw.url('/mcp'), { headers: { accept: 'text/event-stream', 'mcp-session-id': s.sid, 'mcp-protocol-version': s.version, 'last-event-id': id }, signal: AbortSignal.timeout(10_000) });
      const body = await r.text();
      statuses.push(r.status);
      if (r.status === 200) {
        assert.ok(body.includes(`"id":"big${i}"`), `a kept stream replays its answer (${i})`);
        keptBytes += ANSWER;
      } else assert.match(body, /names no stream of this session/);
    }
    assert.ok(keptBytes <= BOUND, `answers kept for resumption: ${keptBytes} bytes of answer text (statuses ${JSON.stringify(statuses)}), over the session's ${BOUND}`);
    assert.equal(statuses[0], 400, 'the oldest goes first');
    assert.equal(statuses.at(-1), 200, 'the newest is kept');
    const metrics = await (await fetch(gw.app.metricsUrl!)).text();
    assert.ok(sample(metrics, 'switchboard_sse_events_dropped_total', { cause: 'evicted' }) >= statuses.filter((st) => st === 400).length, 'the answers let go are counted as evicted');
  });
});
