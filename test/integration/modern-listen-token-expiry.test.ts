// A subscriptions/listen stream is authorized once, by the token its POST carried: it must not outlive that
// token. Before 2026-12-07 a stream opened with a token about to expire went on hearing the endpoint's
// list_changed and resource updates for as long as the connection held (days), though every request of
// that client had been refused 401 since the expiry: with JWTs, expiry is how access ends. Now the stream
// ends when its token does, with a JSON-RPC error that says to listen again with a fresh token.
// Found by an adversarial review of the 2026-07-28 listen streams.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningGateway } from '../helpers/gateway.js';
import { startHmacGateway } from '../helpers/hmac-gateway.js';
import { modernPost, openListen } from '../helpers/modern-http.js';
import { signHmac } from '../helpers/tokens.js';

const SECRET = 'modern-listen-token-expiry-hmac-secret-32+';

describe('a subscriptions/listen stream whose token expires', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startHmacGateway(SECRET);
  });
  after(() => gw.close());

  it('ends when its token expires, saying to listen again with a fresh token', { timeout: 30_000 }, async () => {
    const token = await signHmac(SECRET, { expIn: 3 });
    const listen = await openListen(gw.url(), 'expiring-listen', { toolsListChanged: true }, token);
    try {
      assert.equal(listen.status, 200);
      assert.equal((await listen.next()).method, 'notifications/subscriptions/acknowledged');
      // Bounded by the test's timeout: before, nothing more ever came and the stream stayed open.
      const last = await listen.next();
      assert.equal(last.id, 'expiring-listen', JSON.stringify(last));
      assert.equal(last.error?.code, -32603, JSON.stringify(last));
      assert.match(last.error.message, /token.*expired.*send subscriptions\/listen again/, JSON.stringify(last));
      await assert.rejects(listen.next(), /the listen stream ended/);
    } finally {
      listen.close();
    }
    // The same caller's fresh token listens again (its standing was not ended with the stream).
    const fresh = await signHmac(SECRET, { expIn: 300 });
    const again = await openListen(gw.url(), 'fresh-listen', { toolsListChanged: true }, fresh);
    try {
      assert.deepEqual((await again.next()).params.notifications, { toolsListChanged: true });
      const discover = await modernPost(gw.url(), 'server/discover', {}, { token: fresh });
      assert.equal(discover.status, 200);
    } finally {
      again.close();
    }
  });
});
