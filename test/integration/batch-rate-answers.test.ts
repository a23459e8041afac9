// A 2025-03-26 batch that carries the client's answer to a gateway question (here a sampling request of
// a call in flight) along with new requests, when the tenant's requestsPerSecond does not cover those
// requests (found by a review): the whole batch was refused 429 and the answer thrown away, so the call
// that asked waited until it failed, though answers are never refused for the calls around them. Now the
// answer is passed on and only the requests are refused: the 429's body is a batch response, one error
// per request. A real gateway on a real port in front of the conformance stdio server; auth off (tenant
// "anonymous"). The bucket refills at one token per 100 s: nothing refills while the test runs.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { openSession, post, type EdgeTarget, type Json } from '../helpers/http-edge.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';

/** The JSON-RPC messages of an SSE body, read as they come. */
class SseMessages {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  #text = '';

  constructor(body: ReadableStream<Uint8Array>) {
    this.#reader = body.getReader();
  }

  /** Stops reading (before its request is aborted, so the abort errors no read). */
  async cancel(): Promise<void> {
    await this.#reader.cancel().catch(() => undefined);
  }

  /** Messages until one `done` accepts (included), or the body ends. */
  async until(done: (m: Json) => boolean): Promise<Json[]> {
    const seen: Json[] = [];
    for (;;) {
      let cut: number;
      while ((cut = this.#text.indexOf('\n\n')) !== -1) {
        const data = this.#text.slice(0, cut).split('\n').filter((l) => l.startsWith('data:')).map((l) => l.replace(/^data: ?/, '')).join('\n');
        this.#text = this.#text.slice(cut + 2);
        if (!data.startsWith('{')) continue;
        const m = JSON.parse(data) as Json;
        seen.push(m);
        if (done(m)) return seen;
      }
      const r = await this.#reader.read();
      if (r.done) return seen;
      this.#text += this.#decoder.decode(r.value, { stream: true });
    }
  }
}

/**
 * A call asks the client to sample; the client answers in a batch with two requests the rate does not
 * cover, sent to `batchTo` (the session's own gateway, or another replica that forwards it).
 */
async function answerInRefusedBatch(callTo: EdgeTarget, batchTo: EdgeTarget): Promise<void> {
  const s = await openSession(callTo, '2025-03-26', { sampling: {} }); // one token: two left
  const ac = new AbortController();
  const call = await post(callTo, { jsonrpc: '2.0', id: 'call', method: 'tools/call', params: { name: 'test_sampling', arguments: { prompt: 'hi' } } }, { sid: s.sid, version: s.version, signal: ac.signal });
  assert.equal(call.status, 200); // one token more: one left
  const rest = new SseMessages(call.body!);
  try {
    const asked = await rest.until((m) => m.method === 'sampling/createMessage');
    const question = asked.at(-1)!;
    assert.equal(question.method, 'sampling/createMessage', JSON.stringify(asked));

    const answer = { jsonrpc: '2.0', id: question.id, result: { role: 'assistant', content: { type: 'text', text: 'hello' }, model: 'test', stopReason: 'endTurn' } };
    const batch = [answer, { jsonrpc: '2.0', id: 'x1', method: 'tools/list' }, { jsonrpc: '2.0', id: 'x2', method: 'ping' }];
    const refused = await post(batchTo, batch, { sid: s.sid, version: s.version });
    const text = await refused.text();
    assert.equal(refused.status, 429, text);
    assert.match(refused.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    const errors = JSON.parse(text) as Json[];
    assert.ok(Array.isArray(errors), `a batch response: ${text}`);
    assert.deepEqual(errors.map((e) => e.id), ['x1', 'x2']);
    for (const e of errors) {
      assert.equal(e.error?.data?.code, 'SWB_RATE_LIMITED', text);
      assert.match(String(e.error?.message), /over its request rate; a batch of 2 requests counts as 2/);
    }

    const result = await Promise.race([
      rest.until((m) => m.id === 'call'),
      new Promise<Json[]>((resolve) => setTimeout(() => resolve([{ timedOut: true }]), 8000).unref()),
    ]);
    const done = result.find((m) => m.id === 'call');
    assert.ok(done, `the call got no answer: its sampling answer was thrown away (${JSON.stringify(result)})`);
    assert.match(JSON.stringify(done.result?.content), /LLM response: hello/);
  } finally {
    await rest.cancel();
    ac.abort();
  }
}

const LIMITS = { requestsPerSecond: 0.01, burst: 3 };
const UPSTREAM = { name: 'fx', transport: 'stdio' as const, ...FIXTURE, sharing: 'shared' as const, pool: { size: 1 } };

describe('requestsPerSecond and a 2025-03-26 batch carrying an answer', { timeout: 60_000 }, () => {
  let gw: RunningGateway;

  before(async () => {
    gw = await startGateway({
      upstreams: [UPSTREAM],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
      tenants: [{ name: 'anonymous', endpoints: ['*'], limits: LIMITS }],
    });
  });
  after(() => gw?.close());

  it('passes the answer on and refuses only the requests, each answered in the batch response', () => answerInRefusedBatch(gw, gw));
});

describe('the same batch sent to a replica that does not hold the session', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  let a: RunningGateway;
  let b: RunningGateway;

  before(async () => {
    redis = await startRedis();
    const config = {
      store: { redis: { url: redis.url, keyPrefix: 'batch-answers:' } },
      upstreams: [UPSTREAM],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
      tenants: [{ name: 'anonymous', endpoints: ['*'], limits: LIMITS }],
    };
    a = await startGateway(config);
    b = await startGateway(config);
  });
  after(async () => {
    await b?.close();
    await a?.close();
    await redis?.stop();
  });

  it("forwards the answer to the session's owner, and refuses only the requests", () => answerInRefusedBatch(a, b));
});

// The same for the client's notifications (found by a review): a notifications/cancelled (or
// roots/list_changed) in the refused batch is no request the rate counts, and was thrown away with it, so
// the call it cancelled went on waiting for its sampling answer. Now it is passed on as the answers are.
describe('requestsPerSecond and a 2025-03-26 batch carrying a notification', { timeout: 60_000 }, () => {
  let gw: RunningGateway;

  before(async () => {
    gw = await startGateway({
      upstreams: [UPSTREAM],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
      tenants: [{ name: 'anonymous', endpoints: ['*'], limits: LIMITS }],
    });
  });
  after(() => gw?.close());

  it('passes a cancellation on: the call it names ends, and only the requests are refused', async () => {
    const s = await openSession(gw, '2025-03-26', { sampling: {} }); // one token: two left
    const ac = new AbortController();
    const call = await post(gw, { jsonrpc: '2.0', id: 'call', method: 'tools/call', params: { name: 'test_sampling', arguments: { prompt: 'hi' } } }, { sid: s.sid, version: s.version, signal: ac.signal });
    assert.equal(call.status, 200); // one token more: one left
    const rest = new SseMessages(call.body!);
    try {
      await rest.until((m) => m.method === 'sampling/createMessage');
      const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'call', reason: 'changed my mind' } };
      const batch = [cancel, { jsonrpc: '2.0', id: 'x1', method: 'tools/list' }, { jsonrpc: '2.0', id: 'x2', method: 'ping' }];
      const refused = await post(gw, batch, { sid: s.sid, version: s.version });
      const text = await refused.text();
      assert.equal(refused.status, 429, text);
      assert.deepEqual((JSON.parse(text) as Json[]).map((e) => e.id), ['x1', 'x2'], text);
      const ended = await Promise.race([rest.until(() => false).then(() => 'ended'), new Promise<string>((resolve) => setTimeout(() => resolve('still waiting'), 8000).unref())]);
      assert.equal(ended, 'ended', 'the cancellation was thrown away: the call still waits for its sampling answer');
    } finally {
      await rest.cancel();
      ac.abort();
    }
  });
});
