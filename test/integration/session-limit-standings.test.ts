// What limits.sessions counts, as README says it (the two sections disagreed, found by a review): a
// tenant's 2025 sessions, not its 2026-07-28 standings. A standing is opened by a request, not by an
// initialize that could be refused, one per principal and endpoint: it takes no slot, and the tenant at
// its limit of 2025 sessions still has its modern requests served. Real HTTP, the conformance stdio server.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { initializeBody, post } from '../helpers/http-edge.js';
import { modernPost } from '../helpers/modern-http.js';

const SIMPLE = { name: 'test_simple_text', arguments: {} };

describe('limits.sessions and 2026-07-28 standings', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      tenants: [{ name: 'anonymous', endpoints: ['*'], limits: { sessions: 1 } }],
      upstreams: [{ name: 'fx', transport: 'stdio' as const, ...FIXTURE, sharing: 'shared' as const, pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
  });
  after(() => gw?.close());

  it('a standing takes no slot; the limit bounds the 2025 sessions alone', async () => {
    const first = await modernPost(gw.url(), 'tools/call', SIMPLE);
    assert.equal(first.body.result?.resultType, 'complete', JSON.stringify(first.body));
    assert.equal(gw.app.gateway.modern.sessions.list().length, 1, 'the standing is open');

    const opened = await post(gw, initializeBody('2025-06-18'));
    assert.equal(opened.status, 200, `the standing took the one slot: ${await opened.clone().text()}`);
    const refused = await post(gw, initializeBody('2025-06-18', 2));
    assert.equal(refused.status, 429, 'a second 2025 session is over the limit');

    const again = await modernPost(gw.url(), 'tools/call', SIMPLE);
    assert.equal(again.body.result?.resultType, 'complete', `the standing's requests go on at the limit: ${JSON.stringify(again.body)}`);
  });
});
