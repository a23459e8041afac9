// Instructions are what an upstream instance says of itself at initialize, and an instance of a per-user
// or per-tenant upstream acts for one user or tenant (a server that knows its user writes "connected as
// alice@…" there). A session was shown the instructions of whichever instance of the upstream had become
// ready last: another user's or tenant's (found by a review). Now only an instance that serves the caller.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';
import { ISSUER, PUBLIC_URL, signHmac } from '../helpers/tokens.js';

const HMAC_SECRET = 'instructions-per-owner-test-hmac-secret-32+';
const upstream = (sharing: 'per-user' | 'per-tenant') => ({
  name: 'own',
  transport: 'stdio' as const,
  command: process.execPath,
  args: ['test/fixtures/params-recording-server.mjs', '--own-instructions'],
  sandbox: 'none' as const,
  sharing,
});

for (const sharing of ['per-user', 'per-tenant'] as const) {
  describe(`server/discover's instructions, ${sharing} upstream`, () => {
    let gw: RunningGateway;
    const tokens: Record<string, string> = {};
    before(async () => {
      gw = await startGateway({
        pinning: { mode: 'off' },
        server: { publicUrl: PUBLIC_URL },
        auth: { mode: 'jwt', issuer: ISSUER, audience: [PUBLIC_URL], hmacSecret: HMAC_SECRET, allowHmac: true, algorithms: ['HS256'] },
        tenants: [
          { name: 'ta', endpoints: ['/mcp'] },
          { name: 'tb', endpoints: ['/mcp'] },
        ],
        upstreams: [upstream(sharing)],
        endpoints: [{ path: '/mcp', upstreams: ['own'] }],
      });
      tokens.a = await signHmac(HMAC_SECRET, { sub: 'alice', tenant: 'ta', expIn: 3600 });
      tokens.b = await signHmac(HMAC_SECRET, { sub: 'bob', tenant: 'tb', expIn: 3600 });
    });
    after(() => gw.close());

    const post = async (who: string, method: string) => {
      const r = await modernPost(gw.url('/mcp'), method, {}, { token: tokens[who] });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.result;
    };

    it("are never another user's or tenant's instance's", async () => {
      await post('a', 'tools/list'); // alice's instance is running
      const alices = (await post('a', 'server/discover')).instructions;
      assert.match(String(alices), /^process \d+$/, 'alice is shown her own instance\'s');
      const bobsFirst = (await post('b', 'server/discover')).instructions;
      assert.notEqual(bobsFirst, alices, "bob was shown the instructions of alice's instance");
      await post('b', 'tools/list'); // bob's instance is running
      const bobs = (await post('b', 'server/discover')).instructions;
      assert.match(String(bobs), /^process \d+$/, 'bob is shown his own instance\'s once it runs');
      assert.notEqual(bobs, alices);
    });
  });
}
