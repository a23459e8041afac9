// A tenant's requestsPerSecond counts JSON-RPC requests, not HTTP requests: a 2025-03-26 batch of N
// requests takes N tokens from the tenant's bucket, so a batch is no way around the limit (a
// notification takes none). Before, the front door took one token per POST and a batch of any size
// rode on it. A real gateway on a real
// port in front of the catalogue stdio server; auth off, so the caller is tenant "anonymous", whose
// limits these are. The bucket refills at one token per 100 s: nothing refills while the test runs.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningGateway } from '../helpers/gateway.js';
import { post, type Json } from '../helpers/http-edge.js';
import { openRateLimitedSession, toolsListBatch as batch } from '../helpers/rate-limited-session.js';

const BURST = 8;

/** The JSON-RPC messages of a JSON or SSE answer. */
async function messagesOf(res: Response): Promise<Json[]> {
  const text = await res.text();
  if ((res.headers.get('content-type') ?? '').startsWith('application/json')) {
    const doc = JSON.parse(text) as Json | Json[];
    return Array.isArray(doc) ? doc : [doc];
  }
  return text
    .split(/\n\n/)
    .map((block) => block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.replace(/^data: ?/, '')).join('\n'))
    .filter((data) => data.startsWith('{'))
    .map((data) => JSON.parse(data) as Json);
}

describe('requestsPerSecond and 2025-03-26 batches', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let sid: string;

  before(async () => {
    // One token: initialize (a notification takes none; seven are left).
    ({ gw, sid } = await openRateLimitedSession(BURST));
  });
  after(async () => {
    await gw?.close();
  });

  it('a batch of more requests than the burst is refused whatever is left in the bucket', async () => {
    const refused = await post(gw, batch('c', BURST + 4), { sid });
    assert.equal(refused.status, 429, `a batch of ${BURST + 4}: HTTP ${refused.status}`);
    const body = (await refused.json()) as Json;
    assert.match(String(body.error?.message), new RegExp(`a batch of ${BURST + 4} requests is more than tenant "anonymous" may send at once \\(its burst\\); send them in smaller batches`));
    assert.equal(body.id, 'c-0');
    assert.equal(refused.headers.get('retry-after'), null, 'no wait would let it through');
  });

  it('a batch takes one token per request: one the bucket covers is served, the next one is refused with 429', async () => {
    // Seven tokens are left (the refused batch took none): a batch of three is served.
    const served = await post(gw, batch('a', 3), { sid });
    assert.equal(served.status, 200);
    const answers = await messagesOf(served);
    assert.deepEqual(answers.map((m) => m.id).sort(), ['a-0', 'a-1', 'a-2']);
    assert.ok(answers.every((m) => Array.isArray(m.result?.tools)), JSON.stringify(answers));

    // Four are left: a batch of five is over the tenant's rate, and refused whole.
    const refused = await post(gw, batch('b', 5), { sid });
    assert.equal(refused.status, 429, `a batch of 5 with 4 tokens left: HTTP ${refused.status} ${await refused.clone().text()}`);
    assert.match(refused.headers.get('retry-after') ?? '', /^[1-9]\d*$/, 'Retry-After in whole seconds');
    const body = (await refused.json()) as Json;
    assert.equal(body.jsonrpc, '2.0');
    assert.equal(body.id, 'b-0');
    assert.match(String(body.error?.message), /Too Many Requests: tenant "anonymous" is over its request rate; a batch of 5 requests counts as 5/);
    // It took no token: a request more is served.
    const single = await post(gw, { jsonrpc: '2.0', id: 'd', method: 'tools/list' }, { sid });
    assert.equal(single.status, 200, await single.clone().text());
  });
});
