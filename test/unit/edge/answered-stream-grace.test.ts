// A POST stream's last answer written to a live connection only reached the kernel (or a proxy): a
// client whose network dropped resumes with the priming event's id and must still get it (found by a
// review). Real sockets; the grace the answered stream is kept for is the hub's, shortened where a test
// waits for its end.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { SseHub } from '../../../src/edge/sse-connection.js';
import { StreamableSessionTransport } from '../../../src/edge/streamable-session-transport.js';
import { STREAMS_KEPT_PER_SESSION } from '../../../src/session/event-store.js';
import { MemoryEventStore } from '../../../src/session/memory-event-store.js';

const SSE = { 'content-type': 'text/event-stream' };

describe('StreamableSessionTransport: a stream answered live stays resumable for a grace', () => {
  const hubs: SseHub[] = [];
  let transport: StreamableSessionTransport;
  let events: MemoryEventStore;
  const server = createServer((req, res) => route(req, res));
  let base = '';
  const route = (req: IncomingMessage, res: ServerResponse) => {
    if (req.url?.startsWith('/post/')) transport.openPost([req.url.slice(6)], res, SSE, 'sse', false);
    else transport.resume(String(req.headers['last-event-id']), res, SSE).catch((err: Error) => void res.writeHead(400).end(err.message));
  };
  const fresh = (answerGraceMs: number) => {
    const hub = new SseHub(1 << 20, 60_000, 50, { answerGraceMs });
    hubs.push(hub);
    events = new MemoryEventStore(1000);
    transport = new StreamableSessionTransport({ sessionId: 's', hub, events, resumable: true, retryMs: 100, protocolVersion: () => '2025-11-25', onStreamsChanged: () => {} });
  };

  /** A POST stream for request `id`, its priming event read: the stream's number. */
  async function openPost(id: string): Promise<{ no: number; reader: ReadableStreamDefaultReader<Uint8Array> }> {
    const res = await fetch(`${base}/post/${id}`, { signal: AbortSignal.timeout(5000) });
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    return { no: Number(/id: (\d+)_0/.exec(first)![1]), reader };
  }

  const resume = (lastId: string) => fetch(`${base}/resume`, { headers: { 'last-event-id': lastId }, signal: AbortSignal.timeout(5000) });

  before(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    for (const h of hubs) h.close();
    server.closeAllConnections();
    server.close();
  });

  it('the answer written to a connection whose client never got it is replayed to a resume with the priming id, after what the log holds', async () => {
    fresh(60_000);
    const { no, reader } = await openPost('c');
    await transport.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p', progress: 1 } }, { relatedRequestId: 'c' });
    await transport.send({ jsonrpc: '2.0', id: 'c', result: { answer: 42 } });
    await reader.cancel(); // the client's network dropped: what the gateway wrote never reached it
    const all = await resume(`${no}_0`);
    assert.equal(all.status, 200, 'the stream is still known');
    const text = await all.text(); // ends: the stream is complete
    assert.match(text, new RegExp(`id: ${no}_1\ndata: .*"progress":1`));
    assert.match(text, new RegExp(`id: ${no}_2\ndata: \\{"jsonrpc":"2.0","id":"c","result":\\{"answer":42\\}\\}`));
    const rest = await (await resume(`${no}_1`)).text();
    assert.doesNotMatch(rest, /progress/, 'only what came after the id');
    assert.match(rest, /"answer":42/);
    await transport.close();
  });

  it('with no grace (answerGraceMs 0) the stream is let go as its answer is written', async () => {
    fresh(0);
    const { no, reader } = await openPost('z');
    await transport.send({ jsonrpc: '2.0', id: 'z', result: {} });
    await reader.cancel();
    const r = await resume(`${no}_0`);
    assert.equal(r.status, 400);
    assert.match(await r.text(), /names no stream/);
    await transport.close();
  });

  it('after the grace the stream and its log are let go', async () => {
    fresh(20);
    const { no, reader } = await openPost('d');
    await transport.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p', progress: 1 } }, { relatedRequestId: 'd' });
    await transport.send({ jsonrpc: '2.0', id: 'd', result: {} });
    await reader.cancel();
    let status = 200;
    for (let i = 0; i < 200 && status === 200; i++) {
      const r = await resume(`${no}_0`);
      status = r.status;
      await r.text();
      if (status === 200) await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(status, 400, 'no longer resumable');
    assert.equal(await events.replay('s', no, 0), undefined, 'its logged events dropped');
    await transport.close();
  });

  it(`at most ${STREAMS_KEPT_PER_SESSION} answered streams of a session are kept: the oldest goes first`, async () => {
    fresh(60_000);
    const nos: number[] = [];
    for (let i = 0; i <= STREAMS_KEPT_PER_SESSION; i++) {
      const { no, reader } = await openPost(`r${i}`);
      await transport.send({ jsonrpc: '2.0', id: `r${i}`, result: {} });
      await reader.cancel();
      nos.push(no);
    }
    const oldest = await resume(`${nos[0]}_0`);
    assert.equal(oldest.status, 400);
    await oldest.text();
    const newest = await resume(`${nos.at(-1)}_0`);
    assert.equal(newest.status, 200);
    assert.match(await newest.text(), new RegExp(`"id":"r${STREAMS_KEPT_PER_SESSION}"`));
    await transport.close();
  });
});
