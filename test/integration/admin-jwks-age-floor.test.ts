// The admin API's JWTs are checked by an Authenticator of its own (AdminJwtCheck), with its own copy of
// the issuer's key set: held to the floor the edge's got (jwks-age-floor), so a jwksCacheMaxAgeMs below
// jwksCooldownMs (0 included) is not a key set fetch per admin request, forged tokens included. The floor
// is the edge's code (remoteKeySet), not a copy; this holds the admin API to it. Real gateway, real admin
// listener, a real key set on a loopback port, real tokens.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { ISSUER, JwksServer, makeKey, PUBLIC_URL, signToken, type TestKey } from '../helpers/tokens.js';

describe('admin API: a key set kept for less than jwksCooldownMs', () => {
  let jwks: JwksServer;
  let key: TestKey;
  let gw: RunningGateway;

  before(async () => {
    key = await makeKey('admin-age-floor');
    jwks = await JwksServer.start([key.publicJwk]);
    gw = await startGateway({
      admin: { enabled: true, host: '127.0.0.1', port: 0 },
      server: { publicUrl: PUBLIC_URL },
      auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: jwks.url, jwksCooldownMs: 60_000, jwksCacheMaxAgeMs: 0 },
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

  it('is fetched once within the cooldown, however many forged tokens come; valid ones are still accepted', async () => {
    const valid = await signToken(key, { tenant: 'ops', sub: 'alice', scope: 'switchboard:admin' });
    assert.equal((await sessions(valid)).status, 200);
    const before = jwks.fetches;
    // The trusted kid, a signature of no one: each is refused (401) from the set in hand.
    const forged = `${valid.slice(0, valid.lastIndexOf('.') + 1)}${Buffer.alloc(256, 7).toString('base64url')}`;
    for (let i = 0; i < 10; i++) assert.equal((await sessions(forged)).status, 401);
    assert.equal((await sessions(await signToken(key, { tenant: 'ops', sub: 'bob', scope: 'switchboard:admin' }))).status, 200);
    assert.equal(jwks.fetches - before, 0, `${jwks.fetches - before} key set fetches for 11 admin tokens within one cooldown`);
  });
});
