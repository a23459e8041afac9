// A request pipelined (HTTP/1.1) on a connection whose earlier answer is an event stream still open: its
// answer can leave only once that stream ends (answers go in order), and a standalone GET stream lasts as
// long as the session. Served at once, its call ran upstream and its answer waited behind the stream, unseen;
// a client pipelining the answer to a question a POST stream waits on deadlocked the two. Served in its turn.
// Real HTTP on a real port, a raw socket (fetch never pipelines), a real stdio upstream.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { fixtureConfig, openSession } from '../helpers/http-edge.js';
import { openRawSocket } from '../helpers/raw-socket.js';
import { waitFor } from '../helpers/wait.js';

describe('a request pipelined behind an open event stream', () => {
  let gw: RunningGateway;
  const lines: string[] = [];
  before(async () => {
    gw = await startGateway({ ...fixtureConfig(), tenants: [{ name: 'anonymous', endpoints: ['*'] }] }, { logLines: lines });
  });
  after(() => gw.close());

  it('is served only once the stream has ended', async () => {
    const { sid } = await openSession(gw);
    const port = Number(gw.url().port);
    const c = await openRawSocket('127.0.0.1', port);
    const call = JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'test_simple_text', arguments: {} } });
    const host = `Host: 127.0.0.1:${port}\r\nMcp-Session-Id: ${sid}\r\n`;
    c.socket.write(
      `GET /mcp HTTP/1.1\r\n${host}Accept: text/event-stream\r\n\r\n` +
        `POST /mcp HTTP/1.1\r\n${host}Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(call)}\r\n\r\n${call}`,
    );
    await waitFor(() => c.received().includes('id: 0_0'));
    // The session ends (another connection): its GET stream ends, and what was queued behind it goes out.
    const del = await fetch(gw.url(), { method: 'DELETE', headers: { 'mcp-session-id': sid } });
    assert.equal(del.status, 200);
    await waitFor(() => (c.received().match(/HTTP\/1\.1 /g)?.length ?? 0) >= 2 && /"(error|result)"/.test(c.received()), { timeoutMs: 10_000 });
    const second = c.received().slice(c.received().lastIndexOf('HTTP/1.1 '));
    // Its turn came with the session's end: not found, and no call ran.
    assert.match(second, /^HTTP\/1\.1 404 /, second);
    assert.doesNotMatch(second, /"result"/);
    assert.equal(lines.some((l) => l.includes('"tools/call"')), false, 'the pipelined call was not served');
    c.socket.destroy();
  });
});
