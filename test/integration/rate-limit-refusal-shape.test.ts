// The 429 of a request refused for the tenant's requestsPerSecond carries in its JSON-RPC body the
// gateway's code and the wait, as the 429 of limits.sessions does (data.code SWB_RATE_LIMITED,
// data.retryAfterSeconds equal to Retry-After). Before, it carried the message alone: a client reading the
// body (an SDK hands the JSON-RPC error on, not the HTTP headers) could not tell a rate refusal from any
// other -32000, nor how long to wait. A real gateway on a real port in front of the catalogue stdio
// server; auth off, so the caller is tenant "anonymous". The bucket refills at one token per 100 s.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningGateway } from '../helpers/gateway.js';
import { post, type Json } from '../helpers/http-edge.js';
import { openRateLimitedSession, toolsListBatch as batch } from '../helpers/rate-limited-session.js';

const BURST = 4;

describe('a request refused for the tenant request rate', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let sid: string;

  before(async () => {
    // One token: initialize (three are left).
    ({ gw, sid } = await openRateLimitedSession(BURST));
  });
  after(async () => {
    await gw?.close();
  });

  it("the 429's body says SWB_RATE_LIMITED and how long to wait, as its Retry-After does", async () => {
    const refused = await post(gw, batch('c', BURST), { sid });
    assert.equal(refused.status, 429);
    const wait = refused.headers.get('retry-after');
    assert.match(wait ?? '', /^[1-9]\d*$/);
    const body = (await refused.json()) as Json;
    assert.equal(body.id, 'c-0');
    assert.equal(body.error?.code, -32000);
    assert.deepEqual(body.error?.data, { code: 'SWB_RATE_LIMITED', retryAfterSeconds: Number(wait) });

    // More than the burst: no wait lets it through, so none is named.
    const over = await post(gw, batch('d', BURST + 1), { sid });
    assert.equal(over.status, 429);
    assert.equal(over.headers.get('retry-after'), null);
    assert.deepEqual(((await over.json()) as Json).error?.data, { code: 'SWB_RATE_LIMITED' });
  });
});
