// A consent begun before a reload that changed what the upstream is (its resource, URL or token endpoint)
// and finished after it: the user consented to the old server, for the old resource. Before, the callback
// redeemed the code as the new settings say and sealed the tokens for the new binding, so the new server
// was handed a token its user never consented to give it. Now the callback is refused with a page that says
// why, nothing is linked, and the user's next call asks for consent again (for the upstream as it is now).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { askedConsent, authorize, hop } from '../helpers/consent-browser.js';
import { startConsentServer, type ConsentServer } from '../helpers/consent-server.js';
import { fileGateway, type FileGateway } from '../helpers/file-gateway.js';
import { startIdentityUpstream, type IdentityUpstream } from '../helpers/identity-upstream.js';
import { ISSUER, JwksServer, makeKey, PUBLIC_URL, signToken } from '../helpers/tokens.js';

const AUDIENCE = 'https://tickets.test';
const ALICE = { issuer: ISSUER, subject: 'alice', tenant: 'acme' };

describe('user consent across a reload that changed the upstream', () => {
  let jwks: JwksServer;
  let as: ConsentServer;
  let upstream: IdentityUpstream;
  let fg: FileGateway;
  let token: string;
  const doc = (resource: string) => ({
    server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
    metrics: { enabled: false },
    logging: { level: process.env.LOG_LEVEL ?? 'silent' },
    pinning: { mode: 'off' },
    auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: jwks.url },
    tenants: [{ name: 'acme', endpoints: ['*'] }],
    vault: { key: Buffer.alloc(32, 7).toString('base64') },
    upstreams: [{ name: 'tickets', transport: 'streamable-http', url: upstream.url, sharing: 'per-user', auth: { type: 'user-oauth', clientId: 'switchboard', authorizationServer: as.issuer, resource } }],
    endpoints: [{ path: '/mcp', upstreams: ['tickets'] }],
  });

  before(async () => {
    const key = await makeKey('k1');
    jwks = await JwksServer.start([key.publicJwk]);
    as = await startConsentServer({ audience: AUDIENCE });
    upstream = await startIdentityUpstream({ issuer: as.issuer, audience: AUDIENCE, keys: as.keys });
    token = await signToken(key, { sub: 'alice', expIn: 600 });
    fg = await fileGateway('swb-consent-reload-', doc(AUDIENCE));
  });
  after(async () => {
    await fg?.close();
    await upstream?.close();
    await as?.close();
    await jwks?.close();
  });

  const consentLink = (): Promise<string> => askedConsent(fg.gw.base, token, 'alice');

  it('the callback of a consent begun before the reload is refused and nothing is linked; a new consent links', async () => {
    as.loginAs = 'alice';
    const begun = await authorize(fg.gw.base, await consentLink());
    assert.equal(new URL(begun.authorizeUrl).searchParams.get('resource'), AUDIENCE);
    fg.write(doc('https://tickets-v2.test'));
    const { report } = await fg.app.reload('test');
    assert.equal(report.result, 'applied', JSON.stringify(report));
    const done = await hop(begun.callback, begun.cookie);
    assert.equal(done.status, 409, done.text);
    assert.match(done.text, /changed since you started/);
    assert.equal(await fg.app.gateway.consent!.vault.load('tickets', ALICE), undefined, 'a link was sealed for the new binding');
    assert.equal(as.codes.get('alice'), undefined, 'the code was redeemed');
    // Asked again, for the upstream as it is now: that consent links.
    const again = await authorize(fg.gw.base, await consentLink());
    assert.equal(new URL(again.authorizeUrl).searchParams.get('resource'), 'https://tickets-v2.test');
    const linked = await hop(again.callback, again.cookie);
    assert.equal(linked.status, 200, linked.text);
    assert.ok(await fg.app.gateway.consent!.vault.load('tickets', ALICE));
  });
});
