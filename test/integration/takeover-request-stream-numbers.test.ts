// Request streams of a session taken over (found by a review, 2026-12-07): they were numbered from the new
// owner's wall clock alone (the standalone stream already went on above the log's last id). With that
// clock behind the old owner's by about the session's age, a new request's stream took the number of one
// the old owner logged, its events appended to the same key, and a client resuming it (Last-Event-ID) was
// replayed the old owner's events for another request. Now a taken-over session numbers its request
// streams above every stream its log still holds. A real redis-server, the log the replicas share.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { RedisEventStore } from '../../src/cluster/redis-event-store.js';
import { SseHub } from '../../src/edge/sse-connection.js';
import { StreamableSessionTransport } from '../../src/edge/streamable-session-transport.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { until, withClockAhead } from '../helpers/wait.js';

const PREFIX = 'stream-numbers:';
const SSE = { 'content-type': 'text/event-stream' };

/** Reads an SSE body until `until` matches what it got, or 3 s pass; what it got. */
async function readUntil(res: Response, ac: AbortController, done: RegExp): Promise<string> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  const timer = setTimeout(() => ac.abort(), 3000);
  try {
    while (!done.test(text)) text += (await reader.read()).value ?? '';
  } catch {
    // aborted: what it holds is what it got
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
  return text;
}

describe('a session taken over by a replica whose clock is behind', { timeout: 60_000 }, () => {
  let server: TestRedis;
  let redis: Redis;
  const hub = new SseHub(1 << 20, 60_000);
  let route: (req: IncomingMessage, res: ServerResponse) => void = () => {};
  const http = createServer((req, res) => route(req, res));
  let base = '';
  before(async () => {
    server = await startRedis();
    redis = new Redis(server.url);
    http.listen(0, '127.0.0.1');
    await once(http, 'listening');
    base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  });
  after(async () => {
    hub.close();
    http.closeAllConnections();
    http.close();
    redis.disconnect();
    await server.stop();
  });

  it('numbers its new request streams apart from the old owner\'s: a resume replays none of the old owner\'s events', async () => {
    const sessionId = 'moved';
    const log = (me: string) => new RedisEventStore(redis, PREFIX, { perStream: 100, bytesPerSession: 1 << 20 }, 60_000, { me, key: (id) => `${PREFIX}owner:${id}` });
    const transport = (me: string) => new StreamableSessionTransport({ sessionId, hub, events: log(me), resumable: true, retryMs: 100, protocolVersion: () => '2025-11-25', onStreamsChanged: () => {} });
    // The new owner's clock reads at the takeover what the old owner's read when the session opened.
    const [old, taken] = await withClockAhead(0, async () => [transport('a'), transport('b')]);
    // The old owner: a request whose stream logged a progress event, then the owner died.
    route = (_req, res) => old.openPost([1], res, SSE, 'sse', false);
    const ac1 = new AbortController();
    const first = await fetch(`${base}/`, { signal: ac1.signal });
    await old.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1, message: 'old owner' } }, { relatedRequestId: 1 });
    const oldText = await readUntil(first, ac1, /old owner/);
    const oldNo = /id: (\d+)_1/.exec(oldText)?.[1];
    assert.ok(oldNo, `the old owner's progress event: ${JSON.stringify(oldText)}`);
    const oldEvents = log('a');
    await until('the old owner\'s event logged', async () => ((await oldEvents.replay(sessionId, Number(oldNo), 0)) ?? []).length === 1);
    await redis.set(`${PREFIX}owner:${sessionId}`, 'b'); // taken over
    await taken.continueFrom(log('b'));
    // The new owner: a request, its stream cut before it got the progress, then resumed from its priming event.
    route = (_req, res) => taken.openPost([7], res, SSE, 'sse', false);
    const ac2 = new AbortController();
    const second = await fetch(`${base}/`, { signal: ac2.signal });
    const primed = await readUntil(second, ac2, /id: \d+_0/);
    const newNo = /id: (\d+)_0/.exec(primed)?.[1];
    assert.ok(newNo, `the new stream's priming event: ${JSON.stringify(primed)}`);
    await taken.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 7, progress: 1, message: 'new owner' } }, { relatedRequestId: 7 });
    route = (req, res) => void taken.resume(String(req.headers['last-event-id']), res, SSE).catch((err: Error) => res.writeHead(400).end(err.message));
    const ac3 = new AbortController();
    const resumed = await fetch(`${base}/`, { headers: { 'last-event-id': `${newNo}_0` }, signal: ac3.signal });
    assert.equal(resumed.status, 200);
    const text = await readUntil(resumed, ac3, /new owner/);
    assert.match(text, /new owner/);
    assert.doesNotMatch(text, /old owner/, `the resume of stream ${newNo} replayed the old owner's stream ${oldNo}`);
    await taken.close();
  });
});
