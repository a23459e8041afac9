// One live resume per stream (src/edge/live-resumes.ts). A session could open any number of GETs resuming
// one stream: each resume of a POST stream answered live (within its grace) was given its own copy of the
// answer, held whole for a reader that does not read, and each resume of a stream not held here (taken over)
// its own replay of the log. GETs are not charged to the tenant's rate: only the connection cap bounded
// them (found by a review). Real sockets; the readers never read. A resume is "held" while its response has
// bytes the socket has not taken and its connection is up.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { SseHub } from '../../../src/edge/sse-connection.js';
import { StreamableSessionTransport } from '../../../src/edge/streamable-session-transport.js';
import { MemoryEventStore } from '../../../src/session/memory-event-store.js';
import { until } from '../../helpers/wait.js';

const SSE = { 'content-type': 'text/event-stream' };
const RESUMES = 4;
// Far more than the loopback socket's buffers take from a reader that does not read.
const ANSWER_BYTES = 12 << 20;

describe('a stream has one live resume: a newer one drops the older', () => {
  let hub: SseHub;
  let transport: StreamableSessionTransport;
  let events: MemoryEventStore;
  const resumes: ServerResponse[] = [];
  const sockets: Socket[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.url?.startsWith('/post/')) return transport.openPost([req.url.slice(6)], res, SSE, 'sse', false);
    resumes.push(res);
    transport.resume(String(req.headers['last-event-id']), res, SSE).catch((err: Error) => void res.writeHead(400).end(err.message));
  });
  let port = 0;

  const fresh = () => {
    hub = new SseHub(1 << 20, 60_000, 50, { answerGraceMs: 60_000, answerGraceBytes: 64 << 20 });
    events = new MemoryEventStore(1000, 64, 64 << 20);
    transport = new StreamableSessionTransport({ sessionId: 's', hub, events, resumable: true, retryMs: 100, protocolVersion: () => '2025-11-25', onStreamsChanged: () => {} });
    resumes.length = 0;
  };

  /** RESUMES GETs resuming from `lastId` over raw sockets that are never read, one after the other. */
  async function resumeUnread(lastId: string): Promise<void> {
    for (let i = 0; i < RESUMES; i++) {
      const s = connect(port, '127.0.0.1');
      s.pause();
      s.on('error', () => {});
      sockets.push(s);
      s.write(`GET /resume HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nlast-event-id: ${lastId}\r\n\r\n`);
      await until(`resume ${i} answering`, () => resumes.length === i + 1 && resumes[i]!.headersSent);
    }
  }

  const held = () => resumes.filter((r) => !r.destroyed && !r.writableFinished).length;

  before(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    for (const s of sockets) s.destroy();
    hub?.close();
    server.closeAllConnections();
    server.close();
  });

  it('resumes of a stream answered live, within its grace: only the newest holds its answer', async () => {
    fresh();
    const post = await fetch(`http://127.0.0.1:${port}/post/big`, { signal: AbortSignal.timeout(10_000) });
    const reading = post.text();
    await until('the POST stream open', () => transport.hasPending('big'));
    await transport.send({ jsonrpc: '2.0', id: 'big', result: { s: 'x'.repeat(ANSWER_BYTES) } });
    const first = await reading;
    const no = Number(/id: (\d+)_0/.exec(first)![1]);
    await resumeUnread(`${no}_0`);
    await until('every resume answered', () => resumes.every((r) => r.writableEnded || r.destroyed));
    assert.equal(held(), 1, `${held()} of ${RESUMES} resumes of one answered stream hold its answer`);
    assert.ok(!resumes.at(-1)!.destroyed, 'the newest is the one kept');
    await transport.close();
    hub.close();
  });

  it('resumes of a stream not held here (taken over): only the newest replays its log', async () => {
    fresh();
    const no = 77;
    for (let seq = 1; seq <= 40; seq++) events.append('s', no, seq, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { data: 'y'.repeat(500_000) } }));
    await resumeUnread(`${no}_0`);
    assert.equal(held(), 1, `${held()} of ${RESUMES} resumes of one stream replaying its log`);
    assert.ok(!resumes.at(-1)!.destroyed, 'the newest is the one kept');
    await transport.close();
    hub.close();
  });
});
