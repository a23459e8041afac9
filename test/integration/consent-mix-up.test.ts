// The OAuth mix-up attack (RFC 9700 §4.4) against user consent. Every user-oauth upstream's authorization
// server sends the browser back to the same <publicUrl>/oauth/callback. A malicious upstream's server
// ("evil"), given a consent's state and PKCE challenge at its /authorize, sends the browser on to another
// upstream's honest server with them and the gateway's client_id there; the user consents there, and the
// honest server's code comes back with that state. The gateway redeemed it, with the PKCE verifier, at the
// token endpoint the state named: evil's, which got the code and verifier of the user's account at the
// honest server. An authorization server that names itself in its answers (RFC 9207 `iss`) now gives it
// away: an answer naming another server than the state's is refused and its code sent nowhere.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { askedConsent, consent, hop, local, openLink, submit } from '../helpers/consent-browser.js';
import type { ConsentServer } from '../helpers/consent-server.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { startMixUpRig } from '../helpers/mix-up-rig.js';
import { ISSUER } from '../helpers/tokens.js';

describe('user consent: an authorization response from another server than the consent was sent to (mix-up)', () => {
  let honest: ConsentServer;
  let evil: ConsentServer;
  let gw: RunningGateway;
  let token: string;
  let close: (() => Promise<void>) | undefined;

  before(async () => {
    ({ honest, evil, gw, token, close } = await startMixUpRig({ issInRedirect: true }));
  });
  after(() => close?.());

  const consentLink = (path: string): Promise<string> => askedConsent(gw.base, token, 'alice', path);

  it("a code of the honest server, come back with the evil server's state, is refused and never reaches the evil server", async () => {
    honest.loginAs = 'alice';
    const page = await openLink(gw.base, await consentLink('/evil'));
    const start = await submit(gw.base, page);
    assert.equal(start.status, 303, start.text);
    const sent = new URL(start.location!);
    assert.equal(sent.origin, new URL(evil.issuer).origin);
    // What evil's /authorize does: the same request, to the honest server.
    const mixed = await hop(`${honest.authorizationEndpoint}${sent.search}`);
    assert.equal(mixed.status, 302, mixed.text);
    const done = await hop(local(mixed.location!, gw.base), start.cookie);
    assert.equal(done.status, 400, done.text);
    assert.match(done.text, /another authorization server/);
    assert.equal(evil.codes.size + evil.refused.length, 0, `the evil token endpoint was sent the code: ${evil.refused.join(', ')}`);
    assert.equal(await gw.app.gateway.consent!.vault.load('evil', { issuer: ISSUER, subject: 'alice', tenant: 'acme' }), undefined);
  });

  it('an answer naming its issuer twice (one the state\'s server) is refused, its code sent nowhere', async () => {
    // A server that keeps the query of the redirect_uri it is sent (RFC 6749 §3.1.2 allows one) adds its
    // own iss to the one evil put there: the answer then names both. Read as naming none, the check was
    // skipped (evil's metadata never promises an iss) and the honest server's code went to evil.
    honest.loginAs = 'alice';
    const page = await openLink(gw.base, await consentLink('/evil'));
    const start = await submit(gw.base, page);
    assert.equal(start.status, 303, start.text);
    const sent = new URL(start.location!);
    const mixed = await hop(`${honest.authorizationEndpoint}${sent.search}`);
    assert.equal(mixed.status, 302, mixed.text);
    const twice = new URL(local(mixed.location!, gw.base));
    twice.searchParams.append('iss', evil.issuer);
    const done = await hop(twice.href, start.cookie);
    assert.equal(done.status, 400, done.text);
    assert.match(done.text, /more than once/);
    assert.equal(evil.codes.size + evil.refused.length, 0, `the evil token endpoint was sent the code: ${evil.refused.join(', ')}`);
    assert.equal(await gw.app.gateway.consent!.vault.load('evil', { issuer: ISSUER, subject: 'alice', tenant: 'acme' }), undefined);
    // Spent, as any refused answer's state: sent again with one iss, it links nothing either.
    const again = new URL(local(mixed.location!, gw.base));
    again.searchParams.set('iss', evil.issuer);
    assert.equal((await hop(again.href, start.cookie)).status, 400);
    assert.equal(evil.codes.size + evil.refused.length, 0);
  });

  it("the honest server's own answer, naming itself, links the account", async () => {
    honest.loginAs = 'alice';
    const done = await consent(gw.base, await consentLink('/mcp'));
    assert.equal(done.status, 200, done.text);
    assert.equal(honest.codes.get('alice'), 1);
  });
});
