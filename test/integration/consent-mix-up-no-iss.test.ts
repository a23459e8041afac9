// The OAuth mix-up attack (RFC 9700 §4.4) when the authorization servers send no RFC 9207 `iss`. A
// malicious upstream's server ("evil"), given a consent's state and PKCE challenge at its /authorize, sends
// the browser on to another upstream's honest server with them, the gateway's client_id there and the
// redirect URI the gateway registered there (an honest server sends codes only to a registered URI). The
// user consents there; the honest server's code comes back with evil's state. Every upstream shared one
// /oauth/callback, so the gateway took the answer as evil's and redeemed the code, with the PKCE verifier,
// at evil's token endpoint: evil held the user's account at the honest server. Each upstream now has its
// own redirect URI (RFC 9700 §4.4.2): an answer arriving at another upstream's than its state's is refused.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { askedConsent, authorize, consent, hop, local, openLink, submit } from '../helpers/consent-browser.js';
import { startConsentGateway, type ConsentGateway } from '../helpers/consent-gateway.js';
import { startConsentServer, type ConsentServer } from '../helpers/consent-server.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { startIdentityUpstream, type IdentityUpstream } from '../helpers/identity-upstream.js';
import { startMixUpRig } from '../helpers/mix-up-rig.js';
import { ISSUER } from '../helpers/tokens.js';

const AUDIENCE = 'https://tickets.test';
const ALICE = { issuer: ISSUER, subject: 'alice', tenant: 'acme' };

describe('user consent: a mix-up between two authorization servers that send no iss', () => {
  let honest: ConsentServer;
  let evil: ConsentServer;
  let gw: RunningGateway;
  let token: string;
  let close: (() => Promise<void>) | undefined;

  before(async () => {
    ({ honest, evil, gw, token, close } = await startMixUpRig({ issInRedirect: false }));
  });
  after(() => close?.());

  const consentLink = (path: string): Promise<string> => askedConsent(gw.base, token, 'alice', path);
  /** Where the browser is sent after confirming a consent link: the authorization request. */
  const authorizeRequest = async (path: string): Promise<{ url: URL; cookie: string | undefined }> => {
    const start = await submit(gw.base, await openLink(gw.base, await consentLink(path)));
    assert.equal(start.status, 303, start.text);
    return { url: new URL(start.location!), cookie: start.cookie };
  };

  it("the honest server's code, sent with evil's state to the redirect URI registered there, is refused and never reaches evil", async () => {
    honest.loginAs = 'alice';
    // The redirect URI the gateway uses with the honest server (what its registration there allows).
    const registered = (await authorizeRequest('/mcp')).url.searchParams.get('redirect_uri')!;
    const evilStart = await authorizeRequest('/evil');
    assert.equal(evilStart.url.origin, new URL(evil.issuer).origin);
    // What evil's /authorize does: the same request, to the honest server, with the URI it accepts.
    const mixed = new URLSearchParams(evilStart.url.search);
    mixed.set('redirect_uri', registered);
    const answer = await hop(`${honest.authorizationEndpoint}?${mixed}`);
    assert.equal(answer.status, 302, answer.text);
    assert.equal(new URL(answer.location!).searchParams.get('iss'), null);
    const done = await hop(local(answer.location!, gw.base), evilStart.cookie);
    assert.equal(done.status, 400, done.text);
    assert.equal(evil.codes.size + evil.refused.length, 0, `the evil token endpoint was sent the code: ${evil.refused.join(', ')}`);
    assert.equal(await gw.app.gateway.consent!.vault.load('evil', ALICE), undefined);
    assert.equal(await gw.app.gateway.consent!.vault.load('tickets', ALICE), undefined);
  });

  it('each upstream has its own redirect URI, and a consent through it links the account', async () => {
    honest.loginAs = 'alice';
    const tickets = (await authorizeRequest('/mcp')).url.searchParams.get('redirect_uri');
    const other = (await authorizeRequest('/evil')).url.searchParams.get('redirect_uri');
    assert.equal(tickets, 'https://switchboard.test/oauth/callback/upstream/tickets');
    assert.equal(other, 'https://switchboard.test/oauth/callback/upstream/evil');
    const done = await consent(gw.base, await consentLink('/mcp'));
    assert.equal(done.status, 200, done.text);
    assert.equal(honest.codes.get('alice'), 1);
    assert.notEqual(await gw.app.gateway.consent!.vault.load('tickets', ALICE), undefined);
  });
});

describe('user consent: callback shared (the one /oauth/callback, for a server where only it is registered)', () => {
  let rig: ConsentGateway;
  let as: ConsentServer;
  let upstream: IdentityUpstream;
  let gw: RunningGateway;
  let token: string;

  before(async () => {
    as = await startConsentServer({ audience: AUDIENCE });
    upstream = await startIdentityUpstream({ issuer: as.issuer, audience: AUDIENCE, keys: as.keys, authorizationServer: as.issuer });
    rig = await startConsentGateway([
      { name: 'tickets', path: '/mcp', url: upstream.url, authorizationServer: as.issuer, callback: 'shared' },
      { name: 'notes', path: '/notes', url: upstream.url.replace('/mcp', '/notes'), authorizationServer: as.issuer },
    ]);
    ({ gw, token } = rig);
  });
  after(async () => {
    await rig?.close();
    await upstream?.close();
    await as?.close();
  });

  it('sends and redeems with <publicUrl>/oauth/callback, and links', async () => {
    as.loginAs = 'alice';
    const a = await authorize(gw.base, await askedConsent(gw.base, token, 'alice', '/mcp'));
    assert.equal(new URL(a.authorizeUrl).searchParams.get('redirect_uri'), 'https://switchboard.test/oauth/callback');
    const done = await hop(a.callback, a.cookie);
    assert.equal(done.status, 200, done.text);
    assert.notEqual(await gw.app.gateway.consent!.vault.load('tickets', ALICE), undefined);
  });

  it("an answer for an upstream with its own redirect URI, brought to the shared one (or another upstream's), is refused and its code not redeemed", async () => {
    as.loginAs = 'alice';
    const codes = as.codes.get('alice') ?? 0;
    const a = await authorize(gw.base, await askedConsent(gw.base, token, 'alice', '/notes'));
    const answer = new URL(a.callback);
    assert.equal(answer.pathname, '/oauth/callback/upstream/notes');
    const shared = await hop(`${gw.base}/oauth/callback${answer.search}`, a.cookie);
    assert.equal(shared.status, 400, shared.text);
    assert.match(shared.text, /wrong address/);
    // Spent: not redeemable at its own address after that either.
    assert.equal((await hop(a.callback, a.cookie)).status, 400);
    const b = await authorize(gw.base, await askedConsent(gw.base, token, 'alice', '/notes'));
    const other = await hop(`${gw.base}/oauth/callback/upstream/tickets${new URL(b.callback).search}`, b.cookie);
    assert.equal(other.status, 400, other.text);
    assert.equal(as.codes.get('alice') ?? 0, codes);
    assert.equal(await gw.app.gateway.consent!.vault.load('notes', ALICE), undefined);
  });
});
