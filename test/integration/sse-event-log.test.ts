import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { openSession, post, type EdgeTarget } from '../helpers/http-edge.js';
import { commandCalls, startRedis, type TestRedis } from '../helpers/redis.js';
import { startReplicaFrom, writeEverythingConfig, type Replica } from '../helpers/replicas.js';

// What the event log (kept for Last-Event-ID resumption) costs an SSE answer, counted in a real
// redis-server's command statistics: an answer that ends its POST stream while the client reads it is
// never logged (kept in the gateway's memory for session.answerGraceMs, in case it never arrived); what
// comes before it on the stream (progress) is, until that grace ends. Resumption itself: http-edge.test.ts.

describe('the SSE event log', { timeout: 120_000 }, () => {
  let server: TestRedis;
  let redis: Redis;
  let replica: Replica;
  let gw: EdgeTarget;
  let sid: string;

  before(async () => {
    server = await startRedis();
    redis = new Redis(server.url);
    const file = writeEverythingConfig('sse-log', { store: `{ redis: { url: "${server.url}" } }`, extraYaml: 'session: { answerGraceMs: 200 }\n' });
    writeFileSync(file, readFileSync(file, 'utf8').replace('shutdownGraceMs: 5000 }', 'shutdownGraceMs: 5000, responseMode: sse }'));
    replica = await startReplicaFrom('sse-log', file);
    gw = { url: (path = '/mcp') => new URL(path, replica.base) };
    ({ sid } = await openSession(gw));
  });

  after(async () => {
    replica?.child.kill('SIGTERM');
    await replica?.exited;
    redis?.disconnect();
    await server?.stop();
  });

  it('does not log an answer delivered to its reader: 20 SSE calls, no XADD, no event key left', async () => {
    const before = await commandCalls(redis, 'xadd');
    for (let i = 0; i < 20; i++) {
      const r = await post(gw, { jsonrpc: '2.0', id: 100 + i, method: 'tools/call', params: { name: 'echo', arguments: { message: `m${i}` } } }, { sid });
      assert.equal(r.status, 200);
      assert.match(r.headers.get('content-type') ?? '', /text\/event-stream/);
      const text = await r.text();
      assert.match(text, new RegExp(`Echo: m${i}`));
      assert.match(text, /^id: \d+_1$/m, 'the answer is still an event with an id');
    }
    assert.equal(await commandCalls(redis, 'xadd'), before);
    assert.deepEqual(await redis.keys('*ev:*'), []);
  });

  it("logs what precedes the answer on a stream (progress) and drops it once the ended stream's grace is over", async () => {
    const before = await commandCalls(redis, 'xadd');
    const r = await post(gw, { jsonrpc: '2.0', id: 'slow', method: 'tools/call', params: { name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 }, _meta: { progressToken: 'p' } } }, { sid });
    const text = await r.text();
    assert.equal((text.match(/notifications\/progress/g) ?? []).length, 3);
    assert.match(text, /"id":"slow"/);
    assert.equal(await commandCalls(redis, 'xadd'), before + 3, 'each progress notification was logged, the answer was not');
    // The DEL that drops the finished stream's log goes out when its grace (200 to 400 ms) is over.
    for (let i = 0; i < 150 && (await redis.keys('*ev:*')).length > 0; i++) await new Promise((res) => setTimeout(res, 20));
    assert.deepEqual(await redis.keys('*ev:*'), []);
  });

  it("sends each logged event by its script's SHA (EVALSHA), not the script's text (EVAL) every time", async () => {
    const [xadds, shas] = [await commandCalls(redis, 'xadd'), await commandCalls(redis, 'evalsha')];
    const r = await post(gw, { jsonrpc: '2.0', id: 'steps', method: 'tools/call', params: { name: 'trigger-long-running-operation', arguments: { duration: 0.5, steps: 10 }, _meta: { progressToken: 'q' } } }, { sid });
    assert.equal(((await r.text()).match(/notifications\/progress/g) ?? []).length, 10);
    assert.equal(await commandCalls(redis, 'xadd'), xadds + 10, 'each progress notification was logged');
    // The script's text goes once per connection (ioredis sends EVAL to a connection that has not run it yet).
    assert.ok((await commandCalls(redis, 'evalsha')) - shas >= 9, `appends sent as EVALSHA: ${(await commandCalls(redis, 'evalsha')) - shas} of 10`);
  });
});
