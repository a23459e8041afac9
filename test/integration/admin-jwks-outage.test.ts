// The admin API with JWT admin tokens while the issuer's key set cannot be fetched (found by a review): the
// token could not be checked, not refused, yet the operator was answered 401 "the token is not valid for
// the admin API", as for a forged or expired token, so an operator (or a script) took a good token for a
// bad one while the identity provider was down. The edge answers the same outage 503 with Retry-After
// (README "Authentication"); the admin API now does too, and 401 stays for a token that is refused.
// Real gateway, real JWKS server, real HTTP.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { ISSUER, JwksServer, makeKey, PUBLIC_URL, signToken, type TestKey } from '../helpers/tokens.js';

describe('admin API: a JWT while the key set cannot be fetched', () => {
  let jwks: JwksServer;
  let key: TestKey;
  let gw: RunningGateway;

  before(async () => {
    key = await makeKey('admin-outage');
    jwks = await JwksServer.start([key.publicJwk]);
    gw = await startGateway({
      admin: { enabled: true, host: '127.0.0.1', port: 0 },
      server: { publicUrl: PUBLIC_URL },
      // Every check asks the key set (nothing kept, no cooldown, the keys in hand not used once a refetch
      // fails), so the outage and its end show at once.
      auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: jwks.url, jwksCacheMaxAgeMs: 0, jwksCooldownMs: 0, jwksStaleIfErrorMs: 0, tokenCache: { maxEntries: 0 } },
      tenants: [{ name: 'ops', endpoints: ['*'] }],
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
  });
  after(async () => {
    await gw?.close();
    await jwks?.close();
  });

  const sessions = (token: string) => fetch(new URL('/sessions', gw.app.adminUrl!), { headers: { authorization: `Bearer ${token}` } });

  it('answers 503 with Retry-After, not 401, and the same token is accepted once the key set is back', async () => {
    const token = await signToken(key, { tenant: 'ops', sub: 'alice', scope: 'switchboard:admin' });
    assert.equal((await sessions(token)).status, 200, 'accepted while the key set is served');
    jwks.failWith = 500;
    try {
      const res = await sessions(token);
      const body = (await res.json()) as { error: { code: string; message: string } };
      assert.equal(res.status, 503, `HTTP ${res.status}: ${JSON.stringify(body)}`);
      assert.match(res.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
      assert.equal(res.headers.get('www-authenticate'), null, 'no challenge: the token was not refused');
      assert.equal(body.error.code, 'unavailable');
    } finally {
      jwks.failWith = undefined;
    }
  });

  it('still answers 401 to a token the key set does not verify', async () => {
    const stranger = await makeKey('never-published');
    const res = await sessions(await signToken(stranger, { tenant: 'ops', sub: 'mallory', scope: 'switchboard:admin' }));
    assert.equal(res.status, 401);
  });
});
