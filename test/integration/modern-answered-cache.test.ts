// A 2026-07-28 result made from the caller's own answers (inputResponses) must not be cached: a shared
// cache would hand what one user told the upstream to every caller of the endpoint. A retry's result
// was given ttlMs 0, but a first request that brought its answers along (a client that knows the
// questions: the answers are taken without a round) got the endpoint's cacheTtlMs and "public" (found
// by a review: the user's elicitation answer, cacheable by anyone for a minute).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';

const UPSTREAM = { name: 'rec', transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/params-recording-server.mjs'], sandbox: 'none' as const, sharing: 'shared' as const };

describe('2026-07-28: a result made from answers the first request brought along', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({ pinning: { mode: 'off' }, upstreams: [UPSTREAM], endpoints: [{ path: '/mcp', upstreams: ['rec'], cacheTtlMs: 60_000 }] });
  });
  after(() => gw.close());

  it('is not cacheable (ttlMs 0), as a retry\'s is not', async () => {
    const plain = await modernPost(gw.url('/mcp'), 'resources/read', { uri: 'test://a' });
    assert.equal(plain.body.result?.ttlMs, 60_000, JSON.stringify(plain.body));
    const answers = { 'elicitation-1': { action: 'accept', content: { x: 'alice-private-account-4711' } } };
    const r = await modernPost(gw.url('/mcp'), 'resources/read', { uri: 'test://ask', inputResponses: answers });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.result?.resultType, 'complete', JSON.stringify(r.body));
    assert.match(r.body.result.contents[0].text, /alice-private-account-4711/, 'the answer was used without a round');
    assert.equal(r.body.result.ttlMs, 0, `made from this caller's answers, cacheable for ${r.body.result.ttlMs} ms (${r.body.result.cacheScope})`);
  });
});
