// A gateway served under a path of its public URL (server.publicUrl https://switchboard.test/mcp-gw, a
// reverse proxy passing /mcp-gw/... on without the prefix). The consent links named
// <publicUrl>/oauth/start, but the cookies were set with Path=/oauth/start and Path=/oauth/callback and the
// confirmation's form posted to /oauth/start: a browser never sent the cookies back under /mcp-gw/oauth/...
// and the form left the gateway's URL, so no consent could be given. The test plays the browser (a cookie
// jar that honours Path, the form's action resolved against the page's URL) and the proxy.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { consentUrlOf, urlClient } from '../helpers/consent-browser.js';
import { startConsentServer, type ConsentServer } from '../helpers/consent-server.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startIdentityUpstream, type IdentityUpstream } from '../helpers/identity-upstream.js';
import { ISSUER, JwksServer, makeKey, PUBLIC_URL, signToken } from '../helpers/tokens.js';

const AUDIENCE = 'https://tickets.test';
const VAULT_KEY = Buffer.alloc(32, 13).toString('base64');
const PREFIXED = `${PUBLIC_URL}/mcp-gw`;

/** A browser's cookie jar: each cookie sent back only to URLs its Path matches (RFC 6265 5.1.4). */
class Browser {
  readonly #cookies = new Map<string, { value: string; path: string }>();
  /** The Path attribute of every cookie set. */
  readonly paths: string[] = [];

  constructor(readonly proxy: (publicUrl: string) => string) {}

  async go(url: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; location: string | undefined; text: string }> {
    const path = new URL(url).pathname;
    const sent = [...this.#cookies].filter(([, c]) => path === c.path || path.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`));
    const headers = { ...init.headers, ...(sent.length ? { cookie: sent.map(([k, c]) => `${k}=${c.value}`).join('; ') } : {}) };
    const res = await fetch(this.proxy(url), { method: init.method ?? 'GET', redirect: 'manual', headers, ...(init.body !== undefined ? { body: init.body } : {}) });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';').map((s) => s.trim());
      const eq = pair!.indexOf('=');
      const cookiePath = attrs.find((a) => /^path=/i.test(a))?.slice(5) ?? '/';
      this.paths.push(cookiePath);
      if (attrs.some((a) => /^max-age=0$/i.test(a))) this.#cookies.delete(pair!.slice(0, eq));
      else this.#cookies.set(pair!.slice(0, eq), { value: pair!.slice(eq + 1), path: cookiePath });
    }
    return { status: res.status, location: res.headers.get('location') ?? undefined, text: await res.text() };
  }
}

describe('user consent: a gateway served under a path prefix of its public URL', () => {
  let jwks: JwksServer;
  let as: ConsentServer;
  let upstream: IdentityUpstream;
  let gw: RunningGateway;
  let client: Client | undefined;

  before(async () => {
    const key = await makeKey('k1');
    jwks = await JwksServer.start([key.publicJwk]);
    as = await startConsentServer({ audience: AUDIENCE });
    upstream = await startIdentityUpstream({ issuer: as.issuer, audience: AUDIENCE, keys: as.keys, authorizationServer: as.issuer });
    const userOauth = { type: 'user-oauth' as const, clientId: 'switchboard', authorizationEndpoint: as.authorizationEndpoint, tokenEndpoint: as.tokenEndpoint };
    gw = await startGateway({
      server: { host: '127.0.0.1', port: 0, publicUrl: PREFIXED },
      auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: jwks.url },
      tenants: [{ name: 'acme', endpoints: ['*'] }],
      vault: { key: VAULT_KEY },
      upstreams: [{ name: 'tickets', transport: 'streamable-http', url: upstream.url, sharing: 'per-user', auth: userOauth }],
      endpoints: [{ path: '/mcp', upstreams: ['tickets'] }],
    });
    client = await urlClient(gw.base, await signToken(key, { sub: 'alice', aud: PREFIXED, expIn: 600 }), 'alice');
  });

  after(async () => {
    await client?.close().catch(() => {});
    await gw?.close();
    await upstream?.close();
    await as?.close();
    await jwks?.close();
  });

  it('the confirmation, its POST and the callback all work through the prefix', async () => {
    const whoami = () => client!.callTool({ name: 'whoami', arguments: { claimed: 'alice' } });
    const url = consentUrlOf(await whoami().then((r) => assert.fail(`expected -32042, got ${JSON.stringify(r)}`), (e: unknown) => e));
    assert.ok(url.startsWith(`${PREFIXED}/oauth/start?`), url);
    // The proxy: only the gateway's public URL reaches it, without the prefix; anything else is another site.
    const browser = new Browser((u) => (u.startsWith(`${PREFIXED}/`) ? gw.base + u.slice(PREFIXED.length) : u.startsWith(PUBLIC_URL) ? `${gw.base}/not-the-gateway` : u));
    as.loginAs = 'alice';

    const page = await browser.go(url);
    assert.equal(page.status, 200, page.text);
    const action = /<form method="post" action="([^"]*)">/.exec(page.text)?.[1];
    assert.equal(action && new URL(action.replace(/&amp;/g, '&'), url).href, `${PREFIXED}/oauth/start`, `form action ${action}`);
    const value = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(page.text)?.[1]?.replace(/&amp;/g, '&') ?? '';
    const body = new URLSearchParams({ flow: value('flow'), confirm: value('confirm') }).toString();
    const headers = { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(PUBLIC_URL).origin, 'sec-fetch-site': 'same-origin' };
    const started = await browser.go(new URL(action!.replace(/&amp;/g, '&'), url).href, { method: 'POST', body, headers });
    assert.equal(started.status, 303, started.text);

    const authorized = await browser.go(started.location!);
    assert.equal(authorized.status, 302, authorized.text);
    assert.ok(authorized.location!.startsWith(`${PREFIXED}/oauth/callback/upstream/tickets?`), authorized.location);
    const done = await browser.go(authorized.location!);
    assert.equal(done.status, 200, done.text);
    assert.match(done.text, /Linked/);
    assert.deepEqual([...new Set(browser.paths)].sort(), ['/mcp-gw/oauth/callback', '/mcp-gw/oauth/start']);
    assert.match(JSON.stringify((await whoami()).content), /alice/);
  });
});
