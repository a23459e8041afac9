// Token exchange for 2026-07-28 (stateless) requests: each request's upstream call is exchanged from that
// request's own token. Before, all modern requests of one subject on one endpoint shared one standing,
// whose instance kept the token exchanged for whichever token came first (or whose guard followed the
// latest one): a request made with a narrow token could be served with another client's broader grant.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startExchangeServer, type ExchangeServer } from '../helpers/exchange-server.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startIdentityUpstream, type IdentityUpstream } from '../helpers/identity-upstream.js';
import { modernPost } from '../helpers/modern-http.js';
import { ISSUER, JwksServer, makeKey, PUBLIC_URL, signToken, type TestKey } from '../helpers/tokens.js';

const CLIENT_ID = 'switchboard';
const CLIENT_SECRET = 'gateway-client-secret-never-shown';
const AUDIENCE = 'https://tickets.test';
const NARROW = 'tickets:read';
const BROAD = 'tickets:read tickets:write';

describe('token exchange: each modern request is served with its own token', () => {
  let key: TestKey;
  let jwks: JwksServer;
  let as: ExchangeServer;
  let upstream: IdentityUpstream;
  let gw: RunningGateway;

  before(async () => {
    key = await makeKey('k1');
    jwks = await JwksServer.start([key.publicJwk]);
    as = await startExchangeServer({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, subjectIssuer: ISSUER, subjectKeys: [key.publicJwk], subjectAudience: PUBLIC_URL });
    upstream = await startIdentityUpstream({ issuer: as.issuer, audience: AUDIENCE, actor: CLIENT_ID, keys: as.keys });
    gw = await startGateway({
      server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
      auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: jwks.url },
      tenants: [{ name: 'acme', endpoints: ['*'] }],
      upstreams: [
        {
          name: 'tickets',
          transport: 'streamable-http',
          url: upstream.url,
          sharing: 'per-user',
          auth: { type: 'token-exchange', tokenEndpoint: as.tokenEndpoint, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, audience: AUDIENCE },
        },
      ],
      endpoints: [{ path: '/mcp', upstreams: ['tickets'] }],
    });
  });

  after(async () => {
    await gw?.close();
    await upstream?.close();
    await as?.close();
    await jwks?.close();
  });

  const whoamiWith = async (token: string, label: string): Promise<unknown> => {
    const a = await modernPost(gw.url(), 'tools/call', { name: 'whoami', arguments: { claimed: 'alice' } }, { token });
    assert.equal(a.status, 200, `${label}: ${JSON.stringify(a.body)}`);
    assert.equal(a.body.result?.content?.[0]?.text, 'alice', `${label}: ${JSON.stringify(a.body)}`);
    return upstream.seen.at(-1)!.subjectScope;
  };

  it('narrow and broad tokens of the same subject: each request reaches the upstream with the exchange of its own token', async () => {
    const narrow = await signToken(key, { sub: 'alice', scope: NARROW, expIn: 600 });
    const broad = await signToken(key, { sub: 'alice', scope: BROAD, expIn: 600 });
    assert.equal(await whoamiWith(narrow, 'narrow first'), NARROW);
    // Before: the broad request was served with the narrow token's exchange (one standing, one instance).
    assert.equal(await whoamiWith(broad, 'broad'), BROAD, "the broad request was served with the narrow token's exchange");
    // And a narrow request after the broad one never gets the broad grant.
    assert.equal(await whoamiWith(narrow, 'narrow again'), NARROW, "the narrow request was served with the broad token's exchange");
    // At once, too: one call with each grant, none with the other's.
    const before = upstream.seen.length;
    await Promise.all([whoamiWith(broad, 'broad, concurrent'), whoamiWith(narrow, 'narrow, concurrent')]);
    assert.deepEqual(upstream.seen.slice(before).map((s) => s.subjectScope).sort(), [BROAD, NARROW].sort());
    assert.equal(upstream.crossed, 0);
    assert.deepEqual(upstream.rejected, []);
  });
});
