// Two consents started in one browser before either is finished (found by a review): an agent that calls
// two user-oauth upstreams gets two -32042 links, and the user opens both (two tabs) before signing in.
// /oauth/start bound each sign-in to the browser with one cookie of one fixed name: the second start replaced
// the first's, so the first callback found another binding and was refused "This consent was started in
// another browser" (its state spent: the user had to ask for a new link, and could hit the same again).
// Each sign-in's binding now has a cookie of its own, named after its state. A browser's cookie jar, real
// gateway, real authorization server (code + PKCE), real SDK clients and upstream.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { consentUrlOf, local, openLink, submit, urlClient } from '../helpers/consent-browser.js';
import { startConsentServer, type ConsentServer } from '../helpers/consent-server.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startIdentityUpstream, type IdentityUpstream } from '../helpers/identity-upstream.js';
import { ISSUER, JwksServer, makeKey, PUBLIC_URL, signToken, type TestKey } from '../helpers/tokens.js';

const AUDIENCE = 'https://tickets.test';
const VAULT_KEY = Buffer.alloc(32, 9).toString('base64');

/** A browser's cookies for the gateway: set by name (a later Set-Cookie of a name replaces it), all sent back. */
class CookieJar {
  readonly #cookies = new Map<string, string>();

  /** Follows one hop: the request with the jar's cookies, its Set-Cookie lines kept. */
  /** Keeps a cookie the test's own request was given (a form's POST, made with the helper). */
  keep(cookie: string): void {
    const eq = cookie.indexOf('=');
    this.#cookies.set(cookie.slice(0, eq), cookie.slice(eq + 1));
  }

  async hop(url: string): Promise<{ status: number; location: string | undefined; text: string }> {
    const cookie = [...this.#cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      const [name, value] = [pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim()];
      if (attrs.some((a) => /^\s*max-age=0\s*$/i.test(a))) this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
    return { status: res.status, location: res.headers.get('location') ?? undefined, text: await res.text() };
  }
}

describe('user consent: two sign-ins under way in one browser', () => {
  let key: TestKey;
  let jwks: JwksServer;
  let as: ConsentServer;
  let upstream: IdentityUpstream;
  let gw: RunningGateway;
  const clients: Client[] = [];

  before(async () => {
    key = await makeKey('k1');
    jwks = await JwksServer.start([key.publicJwk]);
    as = await startConsentServer({ audience: AUDIENCE });
    upstream = await startIdentityUpstream({ issuer: as.issuer, audience: AUDIENCE, keys: as.keys, authorizationServer: as.issuer });
    const userOauth = { type: 'user-oauth' as const, clientId: 'switchboard', authorizationEndpoint: as.authorizationEndpoint, tokenEndpoint: as.tokenEndpoint };
    gw = await startGateway({
      server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
      auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: jwks.url },
      tenants: [{ name: 'acme', endpoints: ['*'] }],
      vault: { key: VAULT_KEY },
      upstreams: [
        { name: 'tickets', transport: 'streamable-http', url: upstream.url, sharing: 'per-user', auth: userOauth },
        { name: 'notes', transport: 'streamable-http', url: upstream.url.replace('/mcp', '/notes'), sharing: 'per-user', auth: userOauth },
      ],
      endpoints: [
        { path: '/mcp', upstreams: ['tickets'] },
        { path: '/notes', upstreams: ['notes'] },
      ],
    });
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await gw?.close();
    await upstream?.close();
    await as?.close();
    await jwks?.close();
  });

  const whoami = (c: Client) => c.callTool({ name: 'whoami', arguments: { claimed: 'alice' } });

  it('links both, whichever finishes first', async () => {
    const token = await signToken(key, { sub: 'alice', expIn: 600 });
    const tickets = await urlClient(gw.base, token, 'alice', '/mcp');
    const notes = await urlClient(gw.base, token, 'alice', '/notes');
    clients.push(tickets, notes);
    const urls: string[] = [];
    for (const c of [tickets, notes]) urls.push(consentUrlOf(await whoami(c).then((r) => assert.fail(`expected -32042, got ${JSON.stringify(r)}`), (e: unknown) => e)));

    const browser = new CookieJar();
    as.loginAs = 'alice';
    // Both links opened (two tabs), then each sign-in at the authorization server, in that order.
    const starts = [];
    for (const url of urls) {
      const page = await openLink(gw.base, url);
      assert.equal(page.status, 200, page.text);
      const s = await submit(gw.base, page);
      if (s.cookie) browser.keep(s.cookie);
      starts.push(s);
    }
    const callbacks: string[] = [];
    for (const s of starts) {
      assert.equal(s.status, 303, s.text);
      const authorized = await browser.hop(s.location!);
      assert.equal(authorized.status, 302, authorized.text);
      callbacks.push(local(authorized.location!, gw.base));
    }
    // The first tab finishes first, then the second.
    for (const [i, callback] of callbacks.entries()) {
      const done = await browser.hop(callback);
      assert.equal(done.status, 200, `callback ${i + 1}: ${done.text}`);
      assert.match(done.text, /Linked/);
    }
    for (const c of [tickets, notes]) assert.match(JSON.stringify((await whoami(c)).content), /alice/);
  });
});
