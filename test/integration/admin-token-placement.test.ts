// Where the admin API takes its token from, held to the edge's rules (README "Authentication"). Node keeps
// only the first of repeated Authorization headers in req.headers, and the admin API read only that one:
// a request with the operator's token first and anything after it was served, where the edge refuses any
// repeated Authorization header 400. Real gateway, real admin listener, real HTTP (node:http, which sends
// each header of a list as written; fetch joins them). And a token in the query string was never looked at:
// with the right header the request was served, the token now in every proxy's and browser's history,
// where the edge refuses any token in the query 400.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { ISSUER, JwksServer, makeKey, PUBLIC_URL, rawRequest, signToken, type TestKey } from '../helpers/tokens.js';

const STATIC = 'admin-token-placement-0123456789-abcdefghij';

describe('admin API: where the token is taken from', () => {
  let jwks: JwksServer;
  let key: TestKey;
  let gw: RunningGateway;
  let jwt: string;

  before(async () => {
    key = await makeKey('admin-placement');
    jwks = await JwksServer.start([key.publicJwk]);
    gw = await startGateway({
      admin: { enabled: true, host: '127.0.0.1', port: 0, token: STATIC },
      server: { publicUrl: PUBLIC_URL },
      auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: jwks.url },
      tenants: [{ name: 'ops', endpoints: ['*'] }],
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
    jwt = await signToken(key, { tenant: 'ops', sub: 'alice', scope: 'switchboard:admin' });
  });
  after(async () => {
    await gw?.close();
    await jwks?.close();
  });

  /** A GET on the admin listener with headers as listed (repeated ones kept apart). */
  const get = async (path: string, headers: Array<[string, string]>) => {
    const r = await rawRequest({ ...gw, base: gw.app.adminUrl! }, 'GET', path, headers);
    return { status: r.status, headers: r.headers, body: JSON.parse(r.body) as { error?: { code: string; message: string } } };
  };

  it('serves one Authorization header (static token or JWT)', async () => {
    assert.equal((await get('/sessions', [['authorization', `Bearer ${STATIC}`]])).status, 200);
    assert.equal((await get('/sessions', [['authorization', `Bearer ${jwt}`]])).status, 200);
  });

  it('refuses repeated Authorization headers 400 bad_request, whichever comes first, even two copies of one token', async () => {
    for (const pair of [
      [STATIC, STATIC],
      [STATIC, 'garbage'],
      ['garbage', STATIC],
      [jwt, jwt],
      [jwt, STATIC],
    ]) {
      const r = await get('/sessions', [
        ['authorization', `Bearer ${pair[0]}`],
        ['authorization', `Bearer ${pair[1]}`],
      ]);
      assert.equal(r.status, 400, `${pair.map((t) => t.slice(0, 8)).join(' + ')}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error?.code, 'bad_request');
      assert.match(r.body.error?.message ?? '', /more than one Authorization header/);
      assert.match(String(r.headers['www-authenticate']), /error="invalid_request"/);
    }
  });

  it('refuses a token in the query string 400 bad_request, with a valid header or none, on every route', async () => {
    const queries = [`?access_token=${STATIC}`, `?token=${STATIC}`, `?id_token=${jwt}`, `?ACCESS_TOKEN=${jwt}`, `?${jwt}`, `?q=${jwt}`, `?auth=Bearer%20${jwt}`, `?auth=Bearer+${jwt}`, `?subject=alice&access_token=${STATIC}`];
    for (const path of ['/sessions', '/links', '/openapi.json']) {
      for (const query of queries) {
        for (const headers of [[['authorization', `Bearer ${STATIC}`]], [['authorization', `Bearer ${jwt}`]], []] as Array<Array<[string, string]>>) {
          const r = await get(`${path}${query}`, headers);
          assert.equal(r.status, 400, `${path}${query.slice(0, 24)}… with ${headers.length} header(s): HTTP ${r.status} ${JSON.stringify(r.body)}`);
          assert.equal(r.body.error?.code, 'bad_request');
          assert.match(r.body.error?.message ?? '', /query string/);
        }
      }
    }
  });

  it('still serves a query that holds no token', async () => {
    const r = await get('/sessions?tenant=ops&note=eyJ-not-a-jwt', [['authorization', `Bearer ${STATIC}`]]);
    assert.equal(r.status, 200, JSON.stringify(r.body));
  });
});
