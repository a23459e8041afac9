// requestsPerSecond counts every JSON-RPC request a client sends, whatever the gateway then answers it: the
// token is taken at the edge, once the body is read and before a session, the policy or an upstream is
// asked (chargeRate). A request refused (an unknown or denied tool, a method the gateway has no route for,
// a URI in no normal form) costs its token as a served one does, so a client cannot hammer the gateway with
// refused requests for free. Pinned after a review (2026-12-07) suspected the opposite; it was not so. A real
// gateway on a real port, the catalogue stdio server, a 2025-03-26 session; nothing refills during the test.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningGateway } from '../helpers/gateway.js';
import { post } from '../helpers/http-edge.js';
import { openRateLimitedSession } from '../helpers/rate-limited-session.js';

const BURST = 4;

describe('requestsPerSecond and requests the gateway refuses', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let sid: string;
  before(async () => {
    // One token: initialize (three are left).
    ({ gw, sid } = await openRateLimitedSession(BURST));
  });
  after(async () => {
    await gw?.close();
  });

  it('each refused request took a token: the next request is over the rate', async () => {
    const refused = [
      { jsonrpc: '2.0', id: 'unknown-tool', method: 'tools/call', params: { name: 'no_such_tool', arguments: {} } },
      { jsonrpc: '2.0', id: 'no-route', method: 'no/such/method' },
      { jsonrpc: '2.0', id: 'bad-uri', method: 'resources/read', params: { uri: 'FILE://Upper/%7e' } },
    ];
    for (const body of refused) {
      const res = await post(gw, body, { sid });
      assert.equal(res.status, 200, `${body.id}: answered, not refused for the rate`);
      const text = await res.text();
      assert.match(text, /"error"/, `${body.id}: refused by the gateway: ${text}`);
    }
    const over = await post(gw, { jsonrpc: '2.0', id: 'list', method: 'tools/list' }, { sid });
    assert.equal(over.status, 429, await over.clone().text());
    await over.text();
  });
});
