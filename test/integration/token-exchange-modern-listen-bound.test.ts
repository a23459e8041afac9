// modern.listensPerPrincipal bounds the listen streams one principal (issuer, subject, tenant) holds open on
// an endpoint of a replica. On an endpoint with a token-exchange upstream each verified token has a standing
// of its own (ModernSessions), and the bound was counted per standing: before 2026-12-07 a principal holding
// N tokens (one per refresh) held N times the bound, each stream a connection, a listener and its upstream
// subscriptions. Now the principal's streams are counted together, whichever of its tokens opened them: one
// more than the bound ends its oldest. Found by an adversarial review of the 2026-07-28 listen streams.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startExchangeRig, type ExchangeRig } from '../helpers/exchange-rig.js';
import { openListen } from '../helpers/modern-http.js';
import { signToken } from '../helpers/tokens.js';

describe('modern.listensPerPrincipal on an endpoint whose upstream exchanges each token', () => {
  let rig: ExchangeRig;
  before(async () => {
    rig = await startExchangeRig({ config: { modern: { listensPerPrincipal: 2 }, pinning: { mode: 'off' } } });
  });
  after(() => rig?.close());

  it("counts the principal's streams across its tokens: one more than the bound ends the oldest", { timeout: 30_000 }, async () => {
    const first = await signToken(rig.key, { sub: 'alice', scope: 'tickets:read', expIn: 600 });
    const second = await signToken(rig.key, { sub: 'alice', scope: 'tickets:read tickets:write', expIn: 600 });
    const other = await signToken(rig.key, { sub: 'bob', scope: 'tickets:read', expIn: 600 });
    const streams = [];
    try {
      for (const [id, token] of [['a', first], ['bob', other], ['b', first], ['c', second]] as const) {
        const l = await openListen(rig.gw.url(), id, { toolsListChanged: true }, token);
        streams.push(l);
        assert.equal(l.status, 200);
        assert.equal((await l.next()).method, 'notifications/subscriptions/acknowledged');
      }
      // Before, alice's third stream (another token's standing) ended nothing: `a` stayed open with nothing more to say.
      const ended = await streams[0]!.next();
      assert.equal(ended.id, 'a', JSON.stringify(ended));
      assert.match(ended.error.message, /modern\.listensPerPrincipal/);
      await assert.rejects(streams[0]!.next(), /the listen stream ended/);
      // Bob is another principal: his stream is his own count's.
      assert.equal(rig.gw.app.gateway.modern.sessions.list().reduce((n, s) => n + s.ends.size, 0), 3, 'b, c and bob stay open');
    } finally {
      for (const l of streams) l.close();
    }
  });
});
