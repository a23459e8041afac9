// One session's Streamable HTTP streams against real sockets: a resuming GET that comes too late or
// names the wrong kind of stream is not left open on the session (found by a review).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { SseHub } from '../../../src/edge/sse-connection.js';
import { StreamableSessionTransport } from '../../../src/edge/streamable-session-transport.js';
import { MemoryEventStore } from '../../../src/session/memory-event-store.js';

const SSE = { 'content-type': 'text/event-stream' };

describe('StreamableSessionTransport: resuming GETs', () => {
  const hub = new SseHub(1 << 20, 60_000);
  let transport: StreamableSessionTransport;
  let openStreams = 0;
  let route: (req: IncomingMessage, res: ServerResponse) => void = () => {};
  const server = createServer((req, res) => route(req, res));
  let base = '';
  const fresh = () => {
    openStreams = 0;
    transport = new StreamableSessionTransport({
      sessionId: `s${Math.random()}`,
      hub,
      events: new MemoryEventStore(1000),
      resumable: true,
      retryMs: 100,
      protocolVersion: () => '2025-11-25',
      onStreamsChanged: (d) => (openStreams += d),
    });
  };
  const refuse = (res: ServerResponse) => (err: Error) => void res.writeHead(400).end(err.message);

  before(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    hub.close();
    server.closeAllConnections();
    server.close();
  });

  it('a resume whose session closes while it catches up is ended, not bound to the closed session', async () => {
    fresh();
    await transport.send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'missed' } });
    route = (req, res) => {
      transport.resume('0_0', res, SSE).catch(refuse(res));
      void transport.close(); // a DELETE (or the idle sweep) while the log is being read
    };
    const res = await fetch(`${base}/`, { signal: AbortSignal.timeout(5000) });
    assert.equal(res.status, 200);
    const text = await res.text(); // ends: a stream left bound to the closed session would never
    assert.match(text, /missed/);
    assert.equal(openStreams, 0);
  });

  it('a Last-Event-ID naming a POST answered as JSON is refused: that answer has no events to resume', async () => {
    fresh();
    const json = new Promise<{ answer: Promise<Response> }>((resolve) => {
      route = (req, res) => {
        if (req.url === '/sse') transport.openPost(['a'], res, SSE, 'sse', false);
        else if (req.url === '/json') transport.openPost(['b'], res, { 'content-type': 'application/json' }, 'json', false);
        else transport.resume(String(req.headers['last-event-id']), res, SSE).catch(refuse(res));
      };
      void fetch(`${base}/sse`).then(async (r) => {
        // The SSE POST's priming event names its stream; the JSON POST opened next is the one after it.
        const reader = r.body!.getReader();
        const first = new TextDecoder().decode((await reader.read()).value);
        const no = Number(/id: (\d+)_0/.exec(first)![1]);
        const answer = fetch(`${base}/json`);
        for (let i = 0; i < 100 && !transport.hasPending('b'); i++) await new Promise((r) => setTimeout(r, 10));
        const resumed = await fetch(`${base}/resume`, { headers: { 'last-event-id': `${no + 1}_0` }, signal: AbortSignal.timeout(5000) });
        assert.equal(resumed.status, 400, 'refused');
        assert.match(await resumed.text(), /JSON/);
        await reader.cancel();
        resolve({ answer }); // wrapped: the JSON answer's headers come only once it is sent, below
      });
    });
    const { answer } = await json;
    await transport.send({ jsonrpc: '2.0', id: 'b', result: {} });
    assert.deepEqual(await (await answer).json(), { jsonrpc: '2.0', id: 'b', result: {} });
    await transport.close();
  });
});
