// A standalone GET stream cut because its reader fell behind (server.maxStreamBufferBytes): what was
// queued in the connection and never taken by the socket is not delivered, so the client's next GET
// (without Last-Event-ID) must replay it. Found by a review: it counted as delivered and was lost.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { openSession, post } from '../helpers/http-edge.js';
import { once, until } from '../helpers/wait.js';

const FLOOD = { name: 'flood', transport: 'stdio' as const, command: process.execPath, args: [resolve('test/fixtures/flood-server.mjs')], sandbox: 'none' as const, sharing: 'per-session' as const, pool: { warm: 1 } };
const COUNT = 1500;
const FEW = 10;

/** The sequence numbers of the standalone stream's complete events in an SSE text ("id: 0_<seq>"; not priming events). */
function seqs(text: string): number[] {
  return [...text.matchAll(/^id: 0_(\d+)\ndata: [^\n]+\n\n/gm)].map((m) => Number(m[1]));
}

/** The body of a raw chunked HTTP response, as far as it arrived (a cut one ends part way through a chunk). */
function dechunk(raw: string): string {
  let rest = raw.slice(raw.indexOf('\r\n\r\n') + 4);
  let body = '';
  for (;;) {
    const eol = rest.indexOf('\r\n');
    if (eol < 0) return body;
    const size = parseInt(rest.slice(0, eol), 16);
    if (!(size > 0)) return body;
    body += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 2 + size + 2);
  }
}

/**
 * A GET of the standalone stream on a raw socket, read until `stop()`; then nothing more is read (so the
 * gateway's buffer for it fills) until `drain()` reads what reached the socket, to the gateway's close.
 * Not node:http, whose client throws away a paused response's data when the connection ends early.
 */
async function slowGet(gw: RunningGateway, headers: Record<string, string>) {
  const socket = connect(Number(gw.url().port), '127.0.0.1');
  await once(socket, 'connect');
  const lines = Object.entries({ host: gw.url().host, ...headers }).map(([k, v]) => `${k}: ${v}\r\n`);
  socket.write(`GET /mcp HTTP/1.1\r\n${lines.join('')}\r\n`);
  socket.setEncoding('latin1');
  let raw = '';
  socket.on('data', (chunk: string) => (raw += chunk));
  socket.on('error', () => {});
  const closed = once(socket, 'close');
  const text = () => dechunk(Buffer.from(raw, 'latin1').toString('utf8'));
  return {
    text,
    stop: () => socket.pause(),
    drain: async () => {
      socket.resume();
      await closed;
      return text();
    },
  };
}

describe('a standalone stream cut while its reader is slow', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'swb-slow-get-'));
    gw = await startGateway({ server: { maxStreamBufferBytes: 65536 }, session: { eventsPerStream: 5000, eventBytesPerSession: 32 * 1024 * 1024 }, upstreams: [FLOOD], endpoints: [{ path: '/mcp', upstreams: ['flood'] }] });
  });
  after(async () => {
    await gw?.close();
  });

  it('replays, on the next GET, every message the cut stream never handed to its socket', async () => {
    const s = await openSession(gw, '2025-11-25');
    const headers = { accept: 'text/event-stream', 'mcp-session-id': s.sid, 'mcp-protocol-version': s.version };
    const session = gw.app.gateway.registry.get(s.sid)!;
    const flood = async (id: string, count: number) => {
      const done = join(dir, id);
      const started = await post(gw, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'flood', arguments: { count, bytes: 1024, doneFile: done, detached: true } } }, { sid: s.sid, version: s.version });
      assert.match(await started.text(), /flooding/);
      await until(`flood ${id} to end`, () => existsSync(done), 20_000);
    };
    const slow = await slowGet(gw, headers);
    await until('the GET stream to open', () => session.activity.streams === 1);
    // A few messages the reader reads; then it stops reading, and a flood fills the gateway's buffer.
    await flood('few', FEW);
    await until('the reader to get the first messages', () => seqs(slow.text()).includes(FEW));
    slow.stop();
    await flood('many', COUNT - FEW);
    await until('the slow stream to be cut', () => session.activity.streams === 0);
    await until('every message to be logged', async () => ((await gw.app.gateway.events.replay(s.sid, 0, 0)) ?? []).length === COUNT);
    // The reader now reads what reached its socket before the cut.
    const first = seqs(await slow.drain());
    assert.ok(first.length >= FEW && first.length < COUNT, `the first stream was cut part way (${first.length} of ${COUNT})`);
    const got = first.at(-1)!;

    // The client comes back without Last-Event-ID: it is owed everything after what it got.
    const ac = new AbortController();
    const again = await fetch(gw.url('/mcp'), { headers, signal: ac.signal });
    assert.equal(again.status, 200);
    const reader = again.body!.getReader();
    const dec = new TextDecoder();
    let text = '';
    while (!seqs(text).includes(COUNT)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += dec.decode(value, { stream: true });
    }
    ac.abort();
    const second = seqs(text);
    assert.ok(second.length > 0, 'the second GET replayed something');
    assert.ok(second[0]! <= got + 1, `the first stream got up to ${got}, the next GET started at ${second[0]}: ${second[0]! - got - 1} messages lost`);
    assert.ok(second[0]! > FEW, `the next GET replayed from ${second[0]}, though the first ${FEW} were read before the flood`);
    const all = new Set([...first, ...second]);
    const missing = [];
    for (let i = 1; i <= COUNT; i++) if (!all.has(i)) missing.push(i);
    assert.deepEqual(missing, [], 'messages neither stream delivered');
  });
});
