// A client resumes a POST stream (GET + Last-Event-ID) while the gateway still counts the stream's first
// connection open (the client saw it drop; the gateway did not: a half-open TCP connection, a proxy
// that cut only the client's side). The answer that arrives while the log is being replayed must reach
// the resuming reader: the client has given up on the old connection (found by a review, 2027-01).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { request, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { openSession, post } from '../helpers/http-edge.js';
import { waitFor } from '../helpers/wait.js';

const FLOOD = { name: 'flood', transport: 'stdio' as const, command: process.execPath, args: [resolve('test/fixtures/flood-server.mjs')], sandbox: 'none' as const, sharing: 'shared' as const };
/** Progress events of the call: ~6 MB in all, more than loopback's socket buffers take from a reader that does not read. */
const COUNT = 1000;
const BYTES = 6000;

/** GET + Last-Event-ID with node:http, its body left unread (paused) until the caller reads it. */
function resumeUnread(gw: RunningGateway, sid: string, version: string, lastEventId: string): Promise<IncomingMessage> {
  return new Promise((ok, fail) => {
    const req = request(gw.url('/mcp'), { headers: { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': version, 'last-event-id': lastEventId } }, (res) => {
      res.pause();
      ok(res);
    });
    req.on('error', fail);
    req.end();
  });
}

function readAll(res: IncomingMessage, timeoutMs: number): Promise<{ text: string; ended: boolean }> {
  return new Promise((ok) => {
    let text = '';
    const timer = setTimeout(() => {
      res.destroy();
      ok({ text, ended: false });
    }, timeoutMs);
    res.setEncoding('utf8');
    res.on('data', (d: string) => (text += d));
    res.on('end', () => {
      clearTimeout(timer);
      ok({ text, ended: true });
    });
    res.on('error', () => {
      clearTimeout(timer);
      ok({ text, ended: false });
    });
    res.resume();
  });
}

describe('resuming a POST stream whose first connection the gateway still counts open', () => {
  let gw: RunningGateway;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'swb-takeover-'));
    gw = await startGateway({ server: { responseMode: 'sse', maxStreamBufferBytes: 2 << 20 }, upstreams: [FLOOD], endpoints: [{ path: '/mcp', upstreams: ['flood'] }] });
  });
  after(async () => {
    await gw?.close();
  });

  it('the answer that arrives during the replay goes to the resuming reader, not to the abandoned connection', async () => {
    const s = await openSession(gw, '2025-11-25');
    const done = join(dir, 'done');
    const args = { count: COUNT, bytes: BYTES, doneFile: done, answerDelayMs: 1500 };
    const res = await post(gw, { jsonrpc: '2.0', id: 'f', method: 'tools/call', params: { name: 'flood', arguments: args, _meta: { progressToken: 'p' } } }, { sid: s.sid, version: s.version, signal: AbortSignal.timeout(30_000) });
    assert.equal(res.status, 200);
    // The first connection, read to its end in the background (so the gateway never cuts it as slow).
    let first = '';
    let firstEnded = false;
    void (async () => {
      const dec = new TextDecoder();
      try {
        for await (const chunk of res.body!) first += dec.decode(chunk as Uint8Array, { stream: true });
      } catch {
        // aborted by the timeout: what it holds is what it got
      }
      firstEnded = true;
    })();
    // The last progress event (they come in order) reached it, and so every one was logged.
    assert.ok(await waitFor(() => first.includes(`"progress":${COUNT},`), { timeoutMs: 20_000, intervalMs: 100 }), 'every progress event reached the first connection');
    const primingId = /id: (\S+)\ndata: \n\n/.exec(first)![1]!;

    // The client resumes from the start; its reader does not read yet, so the replay waits on the socket.
    const resumed = await resumeUnread(gw, s.sid, s.version, primingId);
    assert.equal(resumed.statusCode, 200);
    assert.ok(await waitFor(() => existsSync(done), { timeoutMs: 10_000 }), 'the upstream answered');
    await sleep(300);

    const got = await readAll(resumed, 15_000);
    const progress = (got.text.match(/"progress":/g) ?? []).length;
    assert.equal(progress, COUNT, 'the replay carries every progress event');
    assert.ok(got.text.includes(`flooded ${COUNT}`), `the answer never reached the resuming reader (ended: ${got.ended}; the abandoned connection got it: ${first.includes(`flooded ${COUNT}`)})`);
    assert.equal(got.ended, true, 'the resumed stream ends after the answer');
    assert.ok(await waitFor(() => firstEnded, { timeoutMs: 5000 }), 'the abandoned connection was ended');
  });
});
