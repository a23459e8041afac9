// A 2026-07-28 retry that lands on a replica other than the one holding its call, while Redis cannot be
// reached: the replica asks Redis whether the holder lives before it forwards. That question could not be
// answered, and the retry was refused as a broken requestState would be (a 500 with the client library's
// message), though the state is good and the holder may still hold the call: it must be told, as every
// other question the store cannot answer is, 503 SWB_STORE_UNAVAILABLE with Retry-After, the state unused,
// and the same retry completes once Redis is back.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { inputRound, modernPost } from '../helpers/modern-http.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { textOf } from '../helpers/sdk.js';
import { waitFor } from '../helpers/wait.js';

const ASKS_NAME = { name: 'test_input_required_result_elicitation', arguments: {} };
const ALICE = { action: 'accept', content: { name: 'Alice' } };

describe('a modern retry on another replica while Redis is away', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  const requestStateKey = randomBytes(32).toString('base64url');
  const gws: RunningGateway[] = [];

  const start = async () => {
    const gw = await startGateway({
      store: { redis: { url: redis.url, keyPrefix: 'modern-down:', heartbeatMs: 200, replicaTtlMs: 1000 } },
      modern: { requestStateKey },
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
    gws.push(gw);
    return gw;
  };

  before(async () => {
    redis = await startRedis({ persist: true });
  });
  after(async () => {
    for (const gw of gws) await gw.close();
    await redis?.stop();
  });

  const ready = (gw: RunningGateway) => async () => (await fetch(new URL('/readyz', gw.base))).status === 200;

  it('is answered 503 with Retry-After, the state left unused: the same retry completes once Redis is back', async () => {
    const a = await start();
    const b = await start();
    const round = inputRound(await modernPost(a.url(), 'tools/call', ASKS_NAME));
    const retry = { ...ASKS_NAME, inputResponses: { [round.key]: ALICE }, requestState: round.state };
    await redis.stop();
    const refused = await modernPost(b.url(), 'tools/call', retry);
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
    assert.equal(refused.body.error?.code, -32000, JSON.stringify(refused.body));
    assert.equal(refused.body.error?.data?.code, 'SWB_STORE_UNAVAILABLE', JSON.stringify(refused.body));
    await redis.restart();
    assert.ok(await waitFor(async () => (await ready(a)()) && (await ready(b)()), { timeoutMs: 20_000, intervalMs: 200 }), 'replicas not ready again');
    const done = await modernPost(b.url(), 'tools/call', retry);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(textOf(done.body.result), 'Hello, Alice!');
  });
});
