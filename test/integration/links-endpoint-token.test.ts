// A user's /oauth/links with a token issued for one endpoint's resource (aud <publicUrl>/mcp: what an MCP
// client asks for from the resource its discovery found). The route checked the token's signature alone,
// so a token meant for one endpoint (a client trusted with that endpoint only) listed the user's links to the
// upstreams of every endpoint and revoked any of them (found by a review); the MCP routes refuse such a token
// elsewhere, and the admin API refuses it whole. Now such a token sees and revokes only the links to the
// upstreams its endpoints serve; a token for the gateway as a whole (aud <publicUrl>) still sees them all.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { askedConsent, consent } from '../helpers/consent-browser.js';
import { startConsentServer, type ConsentServer } from '../helpers/consent-server.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startIdentityUpstream, type IdentityUpstream } from '../helpers/identity-upstream.js';
import { ISSUER, JwksServer, PUBLIC_URL, makeKey, signToken } from '../helpers/tokens.js';

const AUDIENCE = 'https://tickets.test';
const ALICE = { issuer: ISSUER, subject: 'alice', tenant: 'acme' };

describe('/oauth/links with a token for one endpoint only', () => {
  let jwks: JwksServer;
  let as: ConsentServer;
  let upstream: IdentityUpstream;
  let gw: RunningGateway;
  let whole: string;
  let mcpOnly: string;

  before(async () => {
    const key = await makeKey('k1');
    jwks = await JwksServer.start([key.publicJwk]);
    as = await startConsentServer({ audience: AUDIENCE });
    upstream = await startIdentityUpstream({ issuer: as.issuer, audience: AUDIENCE, keys: as.keys, authorizationServer: as.issuer });
    whole = await signToken(key, { sub: 'alice', expIn: 600 });
    mcpOnly = await signToken(key, { sub: 'alice', expIn: 600, aud: `${PUBLIC_URL}/mcp` });
    const auth = { type: 'user-oauth' as const, clientId: 'switchboard', authorizationServer: as.issuer };
    gw = await startGateway({
      server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
      auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: jwks.url },
      tenants: [{ name: 'acme', endpoints: ['*'] }],
      vault: { key: Buffer.alloc(32, 9).toString('base64') },
      upstreams: [
        { name: 'tickets', transport: 'streamable-http', url: upstream.url, sharing: 'per-user', auth },
        { name: 'notes', transport: 'streamable-http', url: upstream.url.replace('/mcp', '/notes'), sharing: 'per-user', auth },
      ],
      endpoints: [
        { path: '/mcp', upstreams: ['tickets'] },
        { path: '/notes', upstreams: ['notes'] },
      ],
    });
    as.loginAs = 'alice';
    for (const path of ['/mcp', '/notes']) assert.equal((await consent(gw.base, await askedConsent(gw.base, whole, 'alice', path))).status, 200);
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
    await as?.close();
    await jwks?.close();
  });

  const listed = async (token: string) => {
    const res = await fetch(`${gw.base}/oauth/links`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200);
    return ((await res.json()) as { links: Array<{ upstream: string }> }).links.map((l) => l.upstream).sort();
  };
  const revoke = (token: string, upstream: string) => fetch(`${gw.base}/oauth/links/${upstream}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });

  it("lists only the links to its endpoint's upstreams, and cannot revoke another endpoint's", async () => {
    assert.deepEqual(await listed(whole), ['notes', 'tickets']);
    assert.deepEqual(await listed(mcpOnly), ['tickets']);
    const other = await revoke(mcpOnly, 'notes');
    assert.equal(other.status, 403, await other.text());
    assert.notEqual(await gw.app.gateway.consent!.vault.load('notes', ALICE), undefined, "a token for /mcp revoked the link of /notes' upstream");
    assert.equal((await revoke(mcpOnly, 'tickets')).status, 204);
    assert.deepEqual(await listed(whole), ['notes']);
    assert.equal((await revoke(whole, 'notes')).status, 204);
  });
});
