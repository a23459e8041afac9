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
import { startExchangeServer, type ExchangeServer } from '../helpers/exchange-server.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startIdentityUpstream, type IdentityUpstream } from '../helpers/identity-upstream.js';
import { ISSUER, JwksServer, makeKey, mcpRequest, openSession, PUBLIC_URL, signToken, type TestKey } from '../helpers/tokens.js';
import { until } from '../helpers/wait.js';

const CLIENT_ID = 'switchboard';
const CLIENT_SECRET = 'gateway-client-secret-never-shown';
const AUDIENCE = 'https://tickets.test';
const ADMIN = 'expired-subject-admin-token-0123456789';

describe('token exchange: an instance restarted after its user\'s token expired', () => {
  let key: TestKey;
  let jwks: JwksServer;
  let as: ExchangeServer;
  let upstream: IdentityUpstream;
  let gw: RunningGateway;
  const logLines: string[] = [];

  before(async () => {
    key = await makeKey('k1');
    jwks = await JwksServer.start([key.publicJwk]);
    // Exchanged tokens live 3 s: the instance's health pings need a new exchange every second and a half.
    // Not 1 s: the server's tokens count whole seconds (exp = floor(now) + ttl), so a 1 s token could be
    // issued with a few milliseconds left, and the gateway's own (the actor_token) be refused as expired.
    as = await startExchangeServer({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, subjectIssuer: ISSUER, subjectKeys: [key.publicJwk], subjectAudience: PUBLIC_URL, ttlSec: 3 });
    upstream = await startIdentityUpstream({ issuer: as.issuer, audience: AUDIENCE, actor: CLIENT_ID, keys: as.keys });
    gw = await startGateway(
      {
        server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
        auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: jwks.url, clockToleranceSec: 0 },
        admin: { enabled: true, host: '127.0.0.1', port: 0, token: ADMIN },
        tenants: [{ name: 'acme', endpoints: ['*'] }],
        upstreams: [
          {
            name: 'tickets',
            transport: 'streamable-http',
            url: upstream.url,
            sharing: 'per-user',
            // A ping that cannot get a token closes the connection; its restart comes a few seconds later,
            // and one that fails waits longer still on the old timed backoff.
            healthCheck: { intervalMs: 200, timeoutMs: 2000, failures: 1 },
            restart: { initialDelayMs: 3000, maxDelayMs: 60_000 },
            auth: { type: 'token-exchange', tokenEndpoint: as.tokenEndpoint, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, audience: AUDIENCE, scope: 'tickets' },
          },
        ],
        endpoints: [{ path: '/mcp', upstreams: ['tickets'] }],
      },
      { logLines },
    );
  });

  after(async () => {
    await gw?.close();
    await upstream?.close();
    await as?.close();
    await jwks?.close();
  });

  const whoami = (token: string, sid: string, id: number) =>
    mcpRequest(gw, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'whoami', arguments: { claimed: 'alice' } } }, { token, sid });

  /** The instance's last start failure as the admin API shows it, if any. */
  const lastError = async (): Promise<string | undefined> => {
    const res = await fetch(new URL('/upstreams', gw.app.adminUrl!), { headers: { authorization: `Bearer ${ADMIN}` } });
    const { items } = (await res.json()) as { items: Array<{ instances: Array<{ lastError: string | null }> }> };
    return items.flatMap((u) => u.instances).find((i) => i.lastError !== null)?.lastError ?? undefined;
  };

  it('is started at once by the request that brings a fresh token, and its failure is no error line', async () => {
    const first = await signToken(key, { sub: 'alice', expIn: 5 });
    const sid = await openSession(gw, first);
    const r1 = await whoami(first, sid, 2);
    assert.equal(r1.json?.error, undefined, r1.text);
    // The token expires; the next ping finds nothing to exchange, the instance restarts and fails to start.
    let seen: string | undefined;
    await until('the restart to fail for want of a token', async () => (seen = await lastError()) !== undefined, 20_000);
    assert.match(seen!, /no unexpired token of yours/);

    const fresh = await signToken(key, { sub: 'alice', expIn: 600 });
    const r2 = await whoami(fresh, sid, 3);
    assert.equal(r2.json?.error, undefined, `the call with a fresh token is served at once: ${r2.text}`);
    assert.match(JSON.stringify(r2.json?.result), /alice/);
    assert.ok(!logLines.some((l) => l.includes('"level":50') && l.includes('upstream failed to start')), 'a missing subject token is no error-level failure');
  });
});
