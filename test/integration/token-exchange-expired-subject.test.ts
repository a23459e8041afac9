// Token exchange when the user's instance has to start again after the user's own token expired (found by a
// review). An exchange needs the user's latest verified token; a user whose client sat idle past its token's
// expiry has none, so the restart of their instance (its upstream session lost, a failed health check)
// failed with no_subject_token, and was retried on the restart backoff like an authorization server's
// refusal: logged as an error at each attempt, and, worse, when the user came back with a fresh token their
// calls were refused with "the gateway holds no unexpired token of yours to exchange; send the request again
// with a valid token" — which they had just done — until the backoff timer fired (up to restart.maxDelayMs,
// 30 s by default). Only the user's next request can end it, so it now waits for that request as an instance
// awaiting consent does: no timed restart, no error line, and the request that brings a token starts it at
// once. Real gateway, real authorization server (token exchange), real SDK upstream, real HTTP.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startExchangeRig, type ExchangeRig } from '../helpers/exchange-rig.js';
import { mcpRequest, openSession, signToken } from '../helpers/tokens.js';
import { until } from '../helpers/wait.js';

const ADMIN = 'expired-subject-admin-token-0123456789';

describe('token exchange: an instance restarted after its user\'s token expired', () => {
  let rig: ExchangeRig;
  const logLines: string[] = [];

  before(async () => {
    // Exchanged tokens live 3 s: the instance's health pings need a new exchange every second and a half.
    // Not 1 s: the server's tokens count whole seconds (exp = floor(now) + ttl), so a 1 s token could be
    // issued with a few milliseconds left, and the gateway's own (the actor_token) be refused as expired.
    rig = await startExchangeRig({
      ttlSec: 3,
      auth: { clockToleranceSec: 0 },
      config: { admin: { enabled: true, host: '127.0.0.1', port: 0, token: ADMIN } },
      upstream: {
        // A ping that cannot get a token closes the connection; its restart comes a few seconds later,
        // and one that fails waits longer still on the old timed backoff.
        healthCheck: { intervalMs: 200, timeoutMs: 2000, failures: 1 },
        restart: { initialDelayMs: 3000, maxDelayMs: 60_000 },
      },
      exchange: { scope: 'tickets' },
      logLines,
    });
  });

  after(() => rig?.close());

  const whoami = (token: string, sid: string, id: number) =>
    mcpRequest(rig.gw, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'whoami', arguments: { claimed: 'alice' } } }, { token, sid });

  /** The instance's last start failure as the admin API shows it, if any. */
  const lastError = async (): Promise<string | undefined> => {
    const res = await fetch(new URL('/upstreams', rig.gw.app.adminUrl!), { headers: { authorization: `Bearer ${ADMIN}` } });
    const { items } = (await res.json()) as { items: Array<{ instances: Array<{ lastError: string | null }> }> };
    return items.flatMap((u) => u.instances).find((i) => i.lastError !== null)?.lastError ?? undefined;
  };

  it('is started at once by the request that brings a fresh token, and its failure is no error line', async () => {
    const first = await signToken(rig.key, { sub: 'alice', expIn: 5 });
    const sid = await openSession(rig.gw, first);
    const r1 = await whoami(first, sid, 2);
    assert.equal(r1.json?.error, undefined, r1.text);
    // The token expires; the next ping finds nothing to exchange, the instance restarts and fails to start.
    let seen: string | undefined;
    await until('the restart to fail for want of a token', async () => (seen = await lastError()) !== undefined, 20_000);
    // Said as it is: the token expired (a fresh one is needed), no word of a reload (none happened).
    assert.match(seen!, /no unexpired token of yours to exchange/);
    assert.match(seen!, /has expired/);
    assert.match(seen!, /send the request again with a fresh token/);
    assert.doesNotMatch(seen!, /reload/, 'a session whose token simply expired was told of a configuration reload');

    const fresh = await signToken(rig.key, { sub: 'alice', expIn: 600 });
    const r2 = await whoami(fresh, sid, 3);
    assert.equal(r2.json?.error, undefined, `the call with a fresh token is served at once: ${r2.text}`);
    assert.match(JSON.stringify(r2.json?.result), /alice/);
    assert.ok(!logLines.some((l) => l.includes('"level":50') && l.includes('upstream failed to start')), 'a missing subject token is no error-level failure');
  });
});
