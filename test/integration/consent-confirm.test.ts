// A consent link sent to someone else (COAT, cross-app OAuth account takeover): mallory's call gives her a
// consent link, she sends it to bob ("connect your tracker here"). /oauth/start used to redirect at once to
// the authorization server, so bob signed in there as himself and his upstream tokens were sealed under
// mallory's principal. Now the link opens a page that names the gateway user the account will serve, warns,
// and continues only by its own form's POST (same origin, the page's value and its cookie). A real gateway,
// a real authorization server (oauth2-mock-server) and the test playing the browsers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { consentUrlOf, hop, local, openLink, submit, urlClient } from '../helpers/consent-browser.js';
import { startConsentServer, type ConsentServer } from '../helpers/consent-server.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startIdentityUpstream, type IdentityUpstream } from '../helpers/identity-upstream.js';
import { ISSUER, JwksServer, makeKey, PUBLIC_URL, signToken } from '../helpers/tokens.js';

const AUDIENCE = 'https://tickets.test';
const VAULT_KEY = Buffer.alloc(32, 11).toString('base64');

describe('user consent: a link opened by someone else does not reach the authorization server without a confirmation', () => {
  let jwks: JwksServer;
  let as: ConsentServer;
  let upstream: IdentityUpstream;
  let gw: RunningGateway;
  const clients: Client[] = [];

  before(async () => {
    const key = await makeKey('k1');
    jwks = await JwksServer.start([key.publicJwk]);
    as = await startConsentServer({ audience: AUDIENCE });
    upstream = await startIdentityUpstream({ issuer: as.issuer, audience: AUDIENCE, keys: as.keys, authorizationServer: as.issuer });
    gw = await startGateway({
      server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
      auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: jwks.url },
      tenants: [{ name: 'acme', endpoints: ['*'] }],
      vault: { key: VAULT_KEY },
      upstreams: [{ name: 'tickets', transport: 'streamable-http', url: upstream.url, sharing: 'per-user', auth: { type: 'user-oauth', clientId: 'switchboard' } }],
      endpoints: [{ path: '/mcp', upstreams: ['tickets'] }],
    });
    clients.push(await urlClient(gw.base, await signToken(key, { sub: 'mallory', expIn: 600 }), 'mallory'));
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await gw?.close();
    await upstream?.close();
    await as?.close();
    await jwks?.close();
  });

  const malloryLink = async () =>
    consentUrlOf(await clients[0]!.callTool({ name: 'whoami', arguments: { claimed: 'mallory' } }).then((r) => assert.fail(`expected -32042, got ${JSON.stringify(r)}`), (e: unknown) => e));

  it("the victim opening the link (GET, as a prefetch or a link preview would) reaches no authorization server and is shown whose link it is", async () => {
    const url = await malloryLink();
    const before = as.authorizes;
    const res = await fetch(local(url, gw.base), { redirect: 'manual' });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.equal(res.headers.get('location'), null, 'no redirect');
    assert.ok(!text.includes(as.issuer), 'the page does not name the authorization server');
    assert.match(text, /link your account at the upstream <strong>tickets<\/strong> to the gateway user <strong>mallory<\/strong>/);
    assert.match(text, /If someone sent you this link, close this page/);
    assert.match(text, /<form method="post" action="\/oauth\/start">/);
    assert.ok(!/<script/i.test(text), 'no script');
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.match(res.headers.get('set-cookie') ?? '', /^swb_confirm_[^;]+=[^;]+; Path=\/oauth\/start;.*HttpOnly; SameSite=Strict; Secure$/);
    // Opened again (the prefetch spent nothing): still the page, still no authorization server.
    assert.equal((await openLink(gw.base, url)).status, 200);
    assert.equal((await hop(local(url, gw.base))).location, undefined);
    assert.equal(as.authorizes, before, 'nothing reached /authorize');
    assert.equal(as.codes.size, 0);
  });

  it('a POST without the page value, without its cookie, with another link\'s value, from another origin or cross-site is refused (403) and spends nothing', async () => {
    const url = await malloryLink();
    const page = await openLink(gw.base, url);
    const other = await openLink(gw.base, await malloryLink());
    const before = as.authorizes;
    const refusals = {
      'no value': await submit(gw.base, page, { confirm: undefined }),
      'a forged value': await submit(gw.base, page, { confirm: 'A'.repeat(43) }),
      'no cookie': await submit(gw.base, page, { cookie: undefined }),
      "another link's value and cookie": await submit(gw.base, page, { confirm: other.confirm, cookie: other.cookie!.replace(/^[^=]+/, page.cookie!.split('=')[0]!) }),
      'another origin': await submit(gw.base, page, { headers: { origin: 'https://attacker.test' } }),
      // A sandboxed frame on another site: an opaque origin, cross-site.
      'an opaque origin, cross-site': await submit(gw.base, page, { headers: { origin: 'null', 'sec-fetch-site': 'cross-site' } }),
      'cross-site': await submit(gw.base, page, { headers: { 'sec-fetch-site': 'cross-site' } }),
      'same-site, not same-origin': await submit(gw.base, page, { headers: { 'sec-fetch-site': 'same-site' } }),
    };
    for (const [why, r] of Object.entries(refusals)) {
      assert.equal(r.status, 403, `${why}: ${r.status} ${r.text}`);
      assert.equal(r.location, undefined, why);
      assert.equal(r.cookie, undefined, `${why}: no consent cookie`);
    }
    assert.equal(as.authorizes, before, 'nothing reached /authorize');
    // The link is still its owner's to confirm.
    const ok = await submit(gw.base, page);
    assert.equal(ok.status, 303, ok.text);
    assert.ok(ok.location?.startsWith(`${as.issuer}/authorize?`), ok.location);
  });

  // The page's Referrer-Policy is no-referrer, and a form POST from such a page carries "Origin: null"
  // (Fetch §3.1, as Chrome and Firefox send it): that was refused as a foreign origin, so no real browser
  // could ever confirm a link. The browser still says same-origin (Sec-Fetch-Site), and the page's value
  // and cookie decide, as when no Origin is sent.
  it('the page\'s own form as a browser posts it (Origin: null under its no-referrer policy, Sec-Fetch-Site: same-origin) goes on', async () => {
    const url = await malloryLink();
    const shown = await fetch(local(url, gw.base));
    await shown.body?.cancel();
    assert.equal(shown.headers.get('referrer-policy'), 'no-referrer', 'the page a browser posts from');
    const page = await openLink(gw.base, url);
    const start = await submit(gw.base, page, { headers: { origin: 'null', 'sec-fetch-site': 'same-origin' } });
    assert.equal(start.status, 303, start.text);
    assert.ok(start.location?.startsWith(`${as.issuer}/authorize?`), start.location);
    // Without the page's cookie, the same headers are refused.
    const other = await openLink(gw.base, await malloryLink());
    assert.equal((await submit(gw.base, other, { cookie: undefined, headers: { origin: 'null', 'sec-fetch-site': 'same-origin' } })).status, 403);
  });

  it('confirming on the page (its form POSTed, same origin) goes on to the authorization server and links; the link then works no more', async () => {
    const url = await malloryLink();
    const page = await openLink(gw.base, url);
    const start = await submit(gw.base, page);
    assert.equal(start.status, 303, start.text);
    assert.match(start.cookie ?? '', /^swb_consent_/);
    as.loginAs = 'mallory';
    const authorized = await hop(start.location!);
    assert.equal(authorized.status, 302, authorized.text);
    const done = await hop(local(authorized.location!, gw.base), start.cookie);
    assert.equal(done.status, 200, done.text);
    assert.match(done.text, /linked to the gateway user &quot;mallory&quot;/);
    assert.equal(((await clients[0]!.callTool({ name: 'whoami', arguments: { claimed: 'mallory' } })).content as Array<{ text: string }>)[0]!.text, 'mallory');
    // Single use, as before: neither the page nor its POST work again.
    assert.equal((await openLink(gw.base, url)).status, 400);
    assert.equal((await submit(gw.base, page)).status, 400);
  });
});
