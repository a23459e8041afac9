// vault.verifyUser and the mix-up attack (RFC 9700 §4.4) against the gateway's own identity provider. The
// gateway is an OAuth client of its identity provider (the sign-in that checks who completes a link) and of
// each user-oauth upstream's authorization server, and both answered at one redirect URI. A malicious
// upstream's authorization server, given the browser with its state and PKCE challenge, sent it on to the
// gateway's identity provider under the gateway's own client and redirect URI; the user, just signed in
// there, got a code at once; it came back with the upstream's state and was redeemed at the malicious
// token endpoint with the verifier, where the attacker redeemed it at the identity provider: the user's
// gateway access token. The sign-in now has a redirect URI of its own, and each answers only its own states.
// A real gateway, oauth2-mock-server as the identity provider (exact redirect URI matching added, as OAuth
// 2.1 asks), a hostile authorization server on a loopback port, the test as the browser.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { OAuth2Server } from 'oauth2-mock-server';
import { consentUrlOf, hop, local, openLink, submit, urlClient } from '../helpers/consent-browser.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { PUBLIC_URL } from '../helpers/tokens.js';

const VAULT_KEY = Buffer.alloc(32, 17).toString('base64');
const SIGN_IN_CLIENT = 'switchboard-consent';

/** The hostile authorization server: its /authorize forwards to the identity provider, its /token tries the code there. */
interface Hostile {
  issuer: string;
  /** The redirect URI the gateway's sign-in is registered with (learned from its own sign-in). */
  registered: string | undefined;
  /** Token requests the gateway sent it. */
  tokenRequests: number;
  /** A gateway access token it got with a code the gateway sent it. */
  stolen: string | undefined;
  close(): Promise<void>;
}

async function startHostile(idp: string): Promise<Hostile> {
  const h: Hostile = { issuer: '', registered: undefined, tokenRequests: 0, stolen: undefined, close: async () => {} };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url!, h.issuer);
    if (url.pathname === '/.well-known/oauth-authorization-server') {
      res.setHeader('content-type', 'application/json');
      return res.end(JSON.stringify({ issuer: h.issuer, authorization_endpoint: `${h.issuer}/authorize`, token_endpoint: `${h.issuer}/token` }));
    }
    if (url.pathname === '/authorize') {
      const to = new URL(`${idp}/authorize`);
      const q = url.searchParams;
      for (const [k, v] of Object.entries({ response_type: 'code', client_id: SIGN_IN_CLIENT, redirect_uri: h.registered!, state: q.get('state')!, code_challenge: q.get('code_challenge')!, code_challenge_method: 'S256' })) to.searchParams.set(k, v);
      res.writeHead(302, { location: to.href });
      return res.end();
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      h.tokenRequests++;
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        const redeem = new URLSearchParams({ grant_type: 'authorization_code', code: form.get('code') ?? '', code_verifier: form.get('code_verifier') ?? '', redirect_uri: h.registered!, client_id: SIGN_IN_CLIENT });
        void fetch(`${idp}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: redeem.toString() })
          .then(async (r) => (r.status === 200 ? ((await r.json()) as { access_token?: string }).access_token : undefined))
          .catch(() => undefined)
          .then((token) => {
            h.stolen = token;
            res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_grant' }));
          });
      });
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  h.issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  h.close = () => new Promise((resolve) => server.close(() => resolve()));
  return h;
}

describe("vault.verifyUser: an upstream's authorization server cannot obtain a code of the gateway's own sign-in", () => {
  let idp: OAuth2Server;
  let idpLogin = 'nobody';
  let hostile: Hostile;
  let gw: RunningGateway;
  let client: Client;
  const claims = { aud: PUBLIC_URL, tenant: 'acme' };

  before(async () => {
    idp = new OAuth2Server();
    await idp.issuer.keys.generate('RS256');
    await idp.start(0, '127.0.0.1');
    idp.service.on('beforeTokenSigning', (token: { payload: Record<string, unknown> }) => Object.assign(token.payload, claims, { sub: idpLogin }));
    // Exact redirect URI matching for the gateway's sign-in client: the URI its own first sign-in used is the one registered.
    idp.service.on('beforeAuthorizeRedirect', (redirect: { url: URL }, req: { query: Record<string, unknown> }) => {
      if (req.query.client_id !== SIGN_IN_CLIENT) return;
      hostile.registered ??= String(req.query.redirect_uri);
      if (req.query.redirect_uri !== hostile.registered) redirect.url.href = 'http://127.0.0.1:9/redirect-uri-not-registered';
    });
    hostile = await startHostile(idp.issuer.url!);
    gw = await startGateway({
      server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
      auth: { mode: 'jwt', issuer: idp.issuer.url!, jwksUrl: `${idp.issuer.url!}/jwks` },
      tenants: [{ name: 'acme', endpoints: ['*'] }],
      vault: { key: VAULT_KEY, verifyUser: { clientId: SIGN_IN_CLIENT, authorizationServer: idp.issuer.url! } },
      upstreams: [{ name: 'notes', transport: 'streamable-http', url: `${hostile.issuer}/mcp`, sharing: 'per-user', auth: { type: 'user-oauth', clientId: 'switchboard', authorizationServer: hostile.issuer } }],
      endpoints: [{ path: '/mcp', upstreams: ['notes'] }],
    });
    const token = await idp.issuer.buildToken({ scopesOrTransform: (_header, payload) => Object.assign(payload, claims, { sub: 'bob' }) });
    client = await urlClient(gw.base, token, 'bob');
  });

  after(async () => {
    await client?.close().catch(() => {});
    await gw?.close();
    await hostile?.close();
    await idp?.stop();
  });

  it('the code the identity provider issues for the forwarded state is never redeemed at the upstream’s token endpoint', async () => {
    const url = consentUrlOf(await client.callTool({ name: 'whoami', arguments: {} }).then((r) => assert.fail(`expected -32042, got ${JSON.stringify(r)}`), (e: unknown) => e));
    // bob confirms his own link and signs in at the gateway's identity provider as himself.
    const start = await submit(gw.base, await openLink(gw.base, url));
    assert.equal(start.status, 303, start.text);
    idpLogin = 'bob';
    const signedIn = await hop(start.location!);
    assert.equal(signedIn.status, 302, signedIn.text);
    const verified = await hop(local(signedIn.location!, gw.base), start.cookie);
    assert.equal(verified.status, 302, verified.text);
    assert.ok(verified.location?.startsWith(`${hostile.issuer}/authorize?`), verified.location);
    // The hostile server sends the browser on to the identity provider, with the upstream's state and challenge.
    const forwarded = await hop(verified.location!);
    assert.equal(forwarded.status, 302);
    const answered = await hop(forwarded.location!);
    assert.equal(answered.status, 302);
    const done = answered.location?.startsWith(PUBLIC_URL) ? await hop(local(answered.location, gw.base), verified.cookie) : undefined;
    assert.equal(hostile.stolen, undefined, "the hostile server got bob's gateway access token");
    assert.equal(hostile.tokenRequests, 0, "no code went to the upstream's token endpoint");
    // Came back at all (an identity provider that does not match redirect URIs exactly): refused, nothing linked.
    if (done) assert.equal(done.status, 400, done.text);
  });
});
