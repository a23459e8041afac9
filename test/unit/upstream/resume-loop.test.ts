// A remote upstream (Streamable HTTP) that ends a request's stream at once with `retry: 0` and a new event id,
// every time it is resumed, and never answers. A new id counted as progress and retry: 0 was kept: the gateway
// resumed at once, a GET a millisecond for the whole call. Now a new id alone is not progress, no resume comes
// sooner than 50 ms, idle resumes back off, and after 64 in a row the request fails. A real loopback server; the
// transport's clock is virtual (test/helpers/virtual-clock.ts): the test checks the waits the gateway chose and
// how many resumes it made, not how many fit in a wall-clock window.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Agent } from 'undici';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import { createLogger } from '../../../src/observability/logger.js';
import { MAX_IDLE_RESUMES, ResumePace, resumeDelay } from '../../../src/upstream/resume-pace.js';
import { StreamableHttpClientTransport } from '../../../src/upstream/streamable-http-client.js';
import { virtualClock } from '../../helpers/virtual-clock.js';

const INIT_RESULT = { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'u', version: '1' } };
/** The server answers the call on this resume: far past the bound, and the test ends on code that has none. */
const ANSWER_ON = 3 * MAX_IDLE_RESUMES;

describe('a request stream resumed with retry: 0 and a new event id each time, never answered', () => {
  it(`is resumed at 50 ms, then backing off to 5 s, and the call fails after ${MAX_IDLE_RESUMES} idle streams in a row`, async () => {
    let gets = 0;
    let n = 0;
    // Each stream: retry: 0 and a new id (a priming event), then its end; the answer only on resume ANSWER_ON.
    const bounce = (res: import('node:http').ServerResponse) => res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`retry: 0\nid: e${++n}\ndata:\n\n`);
    const answer = (res: import('node:http').ServerResponse) => res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`data: ${JSON.stringify({ jsonrpc: '2.0', id: 2, result: {} })}\n\n`);
    const server = createServer((req, res) => {
      if (req.method === 'GET') return req.headers['last-event-id'] ? (++gets === ANSWER_ON ? answer(res) : bounce(res)) : void res.writeHead(405).end();
      if (req.method === 'DELETE') return void res.writeHead(200).end();
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        const m = JSON.parse(body) as { id?: number; method: string };
        if (m.method === 'initialize') return void res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: INIT_RESULT }));
        if (m.id === undefined) return void res.writeHead(202).end();
        bounce(res);
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const agent = new Agent();
    const cfg = { name: 'u', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, headers: {}, http: { headersTimeoutMs: 2000, bodyTimeoutMs: 500, maxMessageBytes: 64 * 1024 } } as unknown as RemoteUpstreamConfig;
    const clock = virtualClock();
    const t = new StreamableHttpClientTransport(cfg, agent, undefined, createLogger('silent'), clock);
    try {
      await t.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
      let answered = false;
      t.onmessage = (m) => void ('id' in m && m.id === 2 && (answered = true));
      const outcome = await t.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'x' } }).then(() => 'sent', (err: Error) => err.message);
      // Before: resumed at once (retry: 0 kept while each resume brought a new id), ANSWER_ON times, and answered.
      assert.equal(answered, false, `answered on resume ${gets}: it was resumed past ${MAX_IDLE_RESUMES} idle streams`);
      assert.match(outcome, new RegExp(`ended the stream of request 2 ${MAX_IDLE_RESUMES} times in a row within 1 s of its resume, without a message`));
      // The POST's stream and 63 resumes: 64 idle streams. Waits: 50 ms for 8, then doubling from 100 ms to 5 s.
      assert.equal(gets, MAX_IDLE_RESUMES - 1);
      const expected = Array.from({ length: MAX_IDLE_RESUMES - 1 }, (_, i) => (i < 8 ? 50 : Math.min(50 * 2 ** (i - 7), 5000)));
      assert.deepEqual(clock.waits, expected);
    } finally {
      await t.close();
      server.closeAllConnections();
      server.close();
      await agent.close();
    }
  });

  it(`is given up after ${MAX_IDLE_RESUMES} idle resumes in a row; a message, or a stream open 1 s, starts the count again`, () => {
    let now = 0;
    const pace = new ResumePace(() => now);
    const idle = (): number | undefined => (pace.opened(), (now += 10), pace.ended(false, 0));
    for (let i = 1; i < MAX_IDLE_RESUMES - 1; i++) assert.notEqual(idle(), undefined);
    pace.opened();
    now += 1000;
    assert.equal(pace.ended(false, 0), 50); // open 1 s: working, not bouncing
    for (let i = 1; i < MAX_IDLE_RESUMES - 1; i++) idle();
    pace.opened();
    assert.equal(pace.ended(true, 0), 50); // a message
    for (let i = 1; i < MAX_IDLE_RESUMES; i++) assert.notEqual(idle(), undefined);
    assert.equal(idle(), undefined);
  });

  it("waits: the upstream's retry: (never under 50 ms), doubling after 8 idle resumes up to 5 s; without retry: from 100 ms", () => {
    assert.deepEqual([0, 1, 8, 9, 10, 20].map((idle) => resumeDelay(0, idle)), [50, 50, 50, 100, 200, 5000]);
    assert.deepEqual([0, 9, 20].map((idle) => resumeDelay(3000, idle)), [3000, 3000, 5000]);
    assert.deepEqual([0, 1, 10].map((idle) => resumeDelay(undefined, idle)), [100, 200, 5000]);
  });
});
