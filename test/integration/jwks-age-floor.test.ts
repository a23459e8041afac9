// A key set kept for less than jwksCooldownMs (jwksCacheMaxAgeMs 0, "always fresh", or below the
// cooldown): jose refetches a set past its age for every token it checks, and its cooldown bounds only
// the refetch for an unknown kid, so every request, forged tokens and tokens of no one included, was a
// fetch of the issuer's key set: any client could make the gateway hit the issuer once per request.
// The set is now kept at least jwksCooldownMs, the least time between two fetches as documented.
// A real gateway, a real key set on a loopback port, real tokens.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { ISSUER, JwksServer, PUBLIC_URL, initializeBody, makeKey, mcpRequest, signToken, type TestKey } from '../helpers/tokens.js';

describe('auth: a key set kept for less than jwksCooldownMs', () => {
  let jwks: JwksServer;
  let key: TestKey;
  let gw: RunningGateway;

  before(async () => {
    key = await makeKey('age-floor');
    jwks = await JwksServer.start([key.publicJwk]);
    gw = await startGateway({
      server: { publicUrl: PUBLIC_URL },
      auth: { mode: 'jwt', issuer: ISSUER, audience: [PUBLIC_URL], jwksUrl: jwks.url, jwksCooldownMs: 60_000, jwksCacheMaxAgeMs: 0 },
      tenants: [{ name: 'acme', endpoints: ['/mcp'] }],
      upstreams: [{ name: 'fixture', transport: 'stdio', ...FIXTURE, sharing: 'shared' }],
      endpoints: [{ path: '/mcp', upstreams: ['fixture'] }],
    });
  });
  after(async () => {
    await gw?.close();
    await jwks?.close();
  });

  it('is fetched once within the cooldown, however many forged tokens come; valid ones are still accepted', async () => {
    const valid = await signToken(key);
    assert.equal((await mcpRequest(gw, initializeBody(), { token: valid })).status, 200);
    const before = jwks.fetches;
    // The trusted kid, a signature of no one: each is refused (401) from the set in hand.
    const forged = `${valid.slice(0, valid.lastIndexOf('.') + 1)}${Buffer.alloc(256, 7).toString('base64url')}`;
    for (let i = 0; i < 10; i++) assert.equal((await mcpRequest(gw, initializeBody(), { token: forged })).status, 401);
    assert.equal((await mcpRequest(gw, initializeBody(), { token: await signToken(key, { sub: 'bob' }) })).status, 200);
    assert.equal(jwks.fetches - before, 0, `${jwks.fetches - before} key set fetches for 11 tokens within one cooldown`);
  });
});
