// A GET catching up on a log longer than its socket takes, from a reader that does not read: the replay waits for
// the socket (it goes out in slices). The session then ends (DELETE, idle, shutdown): its replaying connection must
// end with it. Before 2026-12-07 close() ended only the streams' bound connections, so the replay waited on, holding
// the ended session's log (up to eventBytesPerSession) and its connection for as long as the reader liked, outside
// every session bound: a client could end a session, open the next, and keep each one's log; and once the reader
// read again, it was sent the whole log of a session that no longer existed. Real gateway, real child, raw socket.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { openSession, post } from '../helpers/http-edge.js';
import { openRawSocket } from '../helpers/raw-socket.js';
import { waitFor } from '../helpers/wait.js';

const FLOOD = { name: 'flood', transport: 'stdio' as const, command: process.execPath, args: [resolve('test/fixtures/flood-server.mjs')], sandbox: 'none' as const, sharing: 'per-session' as const, pool: { warm: 1 } };
/** Log messages of this many bytes each, this many: some 7 MB, more than loopback's socket buffers take from a reader that does not read. */
const COUNT = 1000;
const BYTES = 7000;

describe('a replay to a reader that does not read, when its session ends', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'swb-replay-ended-'));
    gw = await startGateway({ server: { maxStreamBufferBytes: 65536 }, upstreams: [FLOOD], endpoints: [{ path: '/mcp', upstreams: ['flood'] }] });
  });
  after(async () => {
    await gw?.close();
  });

  it('is ended with the session, not left sending the ended session\'s log', async () => {
    const s = await openSession(gw, '2025-11-25');
    const done = join(dir, 'done');
    const started = await post(gw, { jsonrpc: '2.0', id: 'd', method: 'tools/call', params: { name: 'flood', arguments: { count: COUNT, bytes: BYTES, doneFile: done, detached: true } } }, { sid: s.sid, version: s.version });
    assert.match(await started.text(), /flooding/);
    assert.ok(await waitFor(() => existsSync(done), { timeoutMs: 20_000 }));
    // Every message logged on the standalone stream (no GET was open).
    assert.ok(await waitFor(async () => ((await gw.app.gateway.events.replay(s.sid, 0, 0)) ?? []).length === COUNT, { timeoutMs: 20_000 }), 'the log holds every message');

    const { port } = new URL(gw.url('/mcp'));
    const raw = await openRawSocket('127.0.0.1', Number(port));
    // Once the stream is open (its headers came) the reader reads nothing more, and the replay waits for the socket.
    let reading = true;
    raw.socket.on('data', () => {
      if (!reading || !raw.received().includes('\r\n\r\n')) return;
      reading = false;
      raw.socket.pause();
    });
    raw.socket.write(`GET /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\naccept: text/event-stream\r\nmcp-session-id: ${s.sid}\r\nmcp-protocol-version: ${s.version}\r\n\r\n`);
    assert.ok(await waitFor(() => raw.received().includes('\r\n\r\n'), { timeoutMs: 10_000 }), 'the GET stream opened');
    assert.match(raw.received(), /^HTTP\/1\.1 200/);

    const deleted = await fetch(gw.url('/mcp'), { method: 'DELETE', headers: { 'mcp-session-id': s.sid, 'mcp-protocol-version': s.version }, signal: AbortSignal.timeout(10_000) });
    assert.equal(deleted.status, 200);

    // The reader reads again: what the socket took before the session ended, then the end; never the whole log.
    raw.socket.resume();
    // The end of the response (its last chunk; the connection itself may be kept alive), or of the connection.
    const ended = await waitFor(() => raw.closed() || raw.received().endsWith('\r\n0\r\n\r\n'), { timeoutMs: 20_000 });
    const relayed = (raw.received().match(/"logger":"flood"/g) ?? []).length;
    assert.ok(ended, `the replaying connection was not ended with its session (${relayed} messages came)`);
    assert.ok(relayed < COUNT, `the reader was sent all ${COUNT} messages of a session that had ended`);
  });
});
