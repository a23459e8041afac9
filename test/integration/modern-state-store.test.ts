// A 2026-07-28 retry whose requestState cannot be checked for single use because the shared store
// (Redis) is unreachable: the gateway fails closed, but says so as what it is, a passing outage (HTTP
// 503 with Retry-After, the state left unused), not as a refused state (HTTP 400), which tells a client
// to give the state up and start over, leaving the held upstream call to its expiry. Once the store is
// back, the same retry completes the held call.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { inputRound, Journal, MODERN_VERSION, modernPost } from '../helpers/modern-http.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { textOf } from '../helpers/sdk.js';
import { waitFor } from '../helpers/wait.js';

const ASKS_NAME = { name: 'test_input_required_result_elicitation', arguments: {} };
const ALICE = { action: 'accept', content: { name: 'Alice' } };

/** The retry as a raw POST, to read the Retry-After header modernPost does not return. */
async function retryPost(url: URL, params: Record<string, unknown>): Promise<{ status: number; retryAfter: string | null; body: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'tools/call', 'mcp-name': ASKS_NAME.name },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'retry', method: 'tools/call', params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION, 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } } } }),
    signal: AbortSignal.timeout(15_000),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: JSON.parse(await res.text()) };
}

/** The same retry, sent again every 200 ms until it is answered 200 (at most 20 s), with every status seen. */
async function retryUntilAnswered(url: URL, retry: Record<string, unknown>): Promise<{ done: Awaited<ReturnType<typeof retryPost>> | undefined; statuses: number[] }> {
  const statuses: number[] = [];
  const done = await waitFor(async () => {
    const a = await retryPost(url, retry);
    statuses.push(a.status);
    return a.status === 200 ? a : undefined;
  }, { timeoutMs: 20_000, intervalMs: 200 });
  return { done, statuses };
}

describe('a modern retry while the single-use store is down', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  let gw: RunningGateway;
  const journal = new Journal();

  before(async () => {
    redis = await startRedis();
    gw = await startGateway({
      store: { redis: { url: redis.url, keyPrefix: 'mstatestore:', heartbeatMs: 200, replicaTtlMs: 1000 } },
      ...journal.gatewayConfig(),
    });
  });
  after(async () => {
    await gw?.close();
    await redis?.stop();
  });

  it('is answered 503 with Retry-After, not a refused state; the same retry completes once the store is back', async () => {
    const round = inputRound(await modernPost(gw.url(), 'tools/call', ASKS_NAME));
    const retry = { ...ASKS_NAME, inputResponses: { [round.key]: ALICE }, requestState: round.state };
    const mark = journal.mark();
    await redis.stop();
    const down = await retryPost(gw.url(), retry);
    assert.equal(down.status, 503, JSON.stringify(down.body));
    assert.ok(down.retryAfter, 'a 503 says when to retry');
    assert.equal(down.body.id, 'retry');
    assert.equal(down.body.error.data?.code, 'SWB_STORE_UNAVAILABLE', JSON.stringify(down.body));
    assert.deepEqual(journal.since(mark), [], 'nothing reached the upstream');
    assert.equal(gw.app.gateway.modern.held, 1, 'the call is still held');

    await redis.restart();
    const { done, statuses } = await retryUntilAnswered(gw.url(), retry);
    assert.ok(done, `the retry completes once the store is back (saw ${statuses.join(',')})`);
    assert.ok(statuses.every((s) => s === 503 || s === 200), `only 503 before the answer (saw ${statuses.join(',')})`);
    assert.equal(textOf(done.body.result), 'Hello, Alice!');
  });

  it('a store that only paused: the claim it timed out on is undone, so the same retry completes once it answers again', async () => {
    const round = inputRound(await modernPost(gw.url(), 'tools/call', ASKS_NAME));
    const retry = { ...ASKS_NAME, inputResponses: { [round.key]: ALICE }, requestState: round.state };
    // Frozen, not gone: the connection stays open, the claim waits in the server's socket and is carried
    // out when it wakes, after the gateway gave up on it (its command timeout) and answered 503.
    redis.pause();
    let down;
    try {
      down = await retryPost(gw.url(), retry);
    } finally {
      redis.resume();
    }
    assert.equal(down.status, 503, JSON.stringify(down.body));
    const { done, statuses } = await retryUntilAnswered(gw.url(), retry);
    assert.ok(done, `the retry completes, its state not taken for used by the claim that timed out (saw ${statuses.join(',')})`);
    assert.equal(textOf(done.body.result), 'Hello, Alice!');
  });
});
