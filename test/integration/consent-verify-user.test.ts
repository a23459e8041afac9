// vault.verifyUser: who completes a consent link signs in at the gateway's own identity provider first,
// and only the principal the link was made for goes on to the upstream's authorization server. Without
// it, mallory's link forwarded to bob (COAT) linked bob's upstream account to mallory as soon as bob
// confirmed. A real gateway whose JWT auth trusts a real identity provider (oauth2-mock-server: code +
// PKCE, tokens signed with its keys), a second one as the upstream's authorization server, the test as the browsers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { OAuth2Server } from 'oauth2-mock-server';
import { consentUrlOf, hop, local, openLink, submit, urlClient } from '../helpers/consent-browser.js';
import { startConsentServer, type ConsentServer } from '../helpers/consent-server.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startIdentityUpstream, type IdentityUpstream } from '../helpers/identity-upstream.js';
import { PUBLIC_URL } from '../helpers/tokens.js';

const AUDIENCE = 'https://tickets.test';
const VAULT_KEY = Buffer.alloc(32, 13).toString('base64');

describe('user consent with vault.verifyUser: only the principal a link was made for completes it', () => {
  let idp: OAuth2Server;
  /** Who signs in at the gateway's identity provider next. */
  let idpLogin = 'nobody';
  let as: ConsentServer;
  let upstream: IdentityUpstream;
  let gw: RunningGateway;
  const logLines: string[] = [];
  const clients: Record<string, Client> = {};
  const claims = { aud: PUBLIC_URL, tenant: 'acme' };

  before(async () => {
    idp = new OAuth2Server();
    await idp.issuer.keys.generate('RS256');
    await idp.start(0, '127.0.0.1');
    idp.service.on('beforeTokenSigning', (token: { payload: Record<string, unknown> }) => Object.assign(token.payload, claims, { sub: idpLogin }));
    as = await startConsentServer({ audience: AUDIENCE });
    upstream = await startIdentityUpstream({ issuer: as.issuer, audience: AUDIENCE, keys: as.keys, authorizationServer: as.issuer });
    gw = await startGateway(
      {
        server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
        auth: { mode: 'jwt', issuer: idp.issuer.url!, jwksUrl: `${idp.issuer.url!}/jwks` },
        tenants: [{ name: 'acme', endpoints: ['*'] }],
        vault: { key: VAULT_KEY, verifyUser: { clientId: 'switchboard-consent', authorizationServer: idp.issuer.url! } },
        upstreams: [{ name: 'tickets', transport: 'streamable-http', url: upstream.url, sharing: 'per-user', auth: { type: 'user-oauth', clientId: 'switchboard' } }],
        endpoints: [{ path: '/mcp', upstreams: ['tickets'] }],
      },
      { logLines },
    );
    for (const sub of ['mallory', 'bob']) {
      const token = await idp.issuer.buildToken({ scopesOrTransform: (_header, payload) => Object.assign(payload, claims, { sub }) });
      clients[sub] = await urlClient(gw.base, token, sub);
    }
  });

  after(async () => {
    await Promise.all(Object.values(clients).map((c) => c.close().catch(() => {})));
    await gw?.close();
    await upstream?.close();
    await as?.close();
    await idp?.stop();
  });

  const whoami = (sub: string) => clients[sub]!.callTool({ name: 'whoami', arguments: { claimed: sub } });
  const linkOf = async (sub: string) => consentUrlOf(await whoami(sub).then((r) => assert.fail(`expected -32042, got ${JSON.stringify(r)}`), (e: unknown) => e));
  /** The page confirmed, then the sign-in at the gateway's identity provider as `login`: the callback's answer. */
  const signIn = async (url: string, login: string) => {
    const start = await submit(gw.base, await openLink(gw.base, url));
    assert.equal(start.status, 303, start.text);
    assert.ok(start.location?.startsWith(`${idp.issuer.url!}/authorize?`), `to the gateway's identity provider first: ${start.location}`);
    idpLogin = login;
    const signedIn = await hop(start.location!);
    assert.equal(signedIn.status, 302, signedIn.text);
    return hop(local(signedIn.location!, gw.base), start.cookie);
  };

  it("another user who confirms a link sent to them is refused (403, logged, counted) and never reaches the upstream's authorization server", async () => {
    const url = await linkOf('mallory');
    const before = as.authorizes;
    const answer = await signIn(url, 'bob');
    assert.equal(answer.status, 403, answer.text);
    assert.equal(answer.location, undefined);
    assert.match(answer.text, /You signed in to the gateway as &quot;bob&quot;, but this link was made for the gateway user &quot;mallory&quot;: nothing was linked/);
    assert.equal(as.authorizes, before, "nothing reached the upstream's /authorize");
    assert.ok(logLines.some((l) => l.includes('"level":40') && l.includes('signed in to the gateway as another user')), 'logged at warn');
    assert.match(await (await fetch(gw.app.metricsUrl!)).text(), /^switchboard_consent_other_user_total 1$/m);
    // Nothing linked for mallory: her call still asks for consent; the link was spent.
    assert.ok(await linkOf('mallory'));
    assert.equal((await openLink(gw.base, url)).status, 400);
  });

  it("the link's own principal signs in, goes on to the upstream's authorization server, and is linked", async () => {
    const url = await linkOf('mallory');
    const verified = await signIn(url, 'mallory');
    assert.equal(verified.status, 302, verified.text);
    assert.ok(verified.location?.startsWith(`${as.issuer}/authorize?`), verified.location);
    assert.match(verified.cookie ?? '', /^swb_consent_/);
    as.loginAs = 'mallory';
    const authorized = await hop(verified.location!);
    assert.equal(authorized.status, 302, authorized.text);
    const done = await hop(local(authorized.location!, gw.base), verified.cookie);
    assert.equal(done.status, 200, done.text);
    assert.match(done.text, /linked to the gateway user &quot;mallory&quot;/);
    assert.equal(((await whoami('mallory')).content as Array<{ text: string }>)[0]!.text, 'mallory');
  });
});
