// Where a user-oauth upstream's discovery may send the gateway's client secret and users' authorization
// codes. The upstream names its authorization server (RFC 9728 metadata) and that server's metadata names
// its endpoints (RFC 8414); the gateway took any of them: a plain-http server or endpoint on another host
// (the secret and codes in clear on the network), an endpoint at a link-local address (the cloud metadata
// service, 169.254.169.254), an authorization endpoint of any scheme, protected-resource metadata that
// describes another resource. Found by a review. Real HTTP on a loopback port throughout; an undici Agent
// whose lookup sends every host name to 127.0.0.1 lets "as.example.test" be a real server too.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { Agent } from 'undici';
import type { GatewayError } from '../../../src/errors.js';
import { UserOAuthClient } from '../../../src/upstream/user-oauth-client.js';

const lookup = ((_host: string, opts: { all?: boolean }, cb: (...a: unknown[]) => void) =>
  opts?.all ? cb(null, [{ address: '127.0.0.1', family: 4 }]) : cb(null, '127.0.0.1', 4)) as unknown as LookupFunction;

describe('user-oauth discovery: which servers and endpoints are used', () => {
  let server: Server;
  let port: number;
  /** Documents by path; a function gets the origin the request was sent to (its Host). */
  let docs: Map<string, (origin: string) => object | string>;
  /** Requests seen, as `http://host/path`. */
  const seen: string[] = [];
  const agent = new Agent({ connect: { lookup } });
  before(async () => {
    server = createServer((req, res) => {
      const origin = `http://${req.headers.host}`;
      seen.push(`${origin}${req.url}`);
      const doc = docs.get(req.url ?? '');
      if (!doc) return void res.writeHead(404).end();
      const body = doc(origin);
      // A string is a page (a web app answering every path), not JSON.
      if (typeof body === 'string') return void res.writeHead(200, { 'content-type': 'text/html' }).end(body);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    await agent.close();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    seen.length = 0;
    docs = new Map();
  });

  const loopback = () => `http://127.0.0.1:${port}`;
  /** The upstream at `url` names `as` (its protected-resource metadata says it describes `resource`, by default the upstream's URL). */
  const upstreamNames = (as: string, resource?: string) => docs.set('/.well-known/oauth-protected-resource/mcp', (origin) => ({ resource: resource ?? `${origin}/mcp`, authorization_servers: [as] }));
  /** The authorization server's metadata, its issuer the origin asked, with these endpoints. */
  const serverLists = (endpoints: { authorization_endpoint?: string; token_endpoint?: string; issuer?: string }) =>
    docs.set('/.well-known/oauth-authorization-server', (origin) => ({ issuer: origin, authorization_endpoint: `${origin}/authorize`, token_endpoint: `${origin}/token`, ...endpoints }));
  const client = (o: { url?: string; authorizationServer?: string } = {}) =>
    new UserOAuthClient({ name: 'tickets', url: o.url ?? `${loopback()}/mcp` }, { type: 'user-oauth', clientId: 'gw', clientSecret: 'sekrit', authorizationServer: o.authorizationServer, refreshSkewMs: 60_000 } as never, agent, 5000);
  const refused = (c: UserOAuthClient) => c.discover().then(() => assert.fail('discovery accepted it'), (e: unknown) => e as GatewayError);
  const authorizeUrl = (c: UserOAuthClient) => c.authorizeUrl({ state: 's', challenge: 'c', redirectUri: 'https://gw.example/oauth/callback' });

  it('a token endpoint at a link-local address (the cloud metadata service) is refused, named, and the secret never sent', async () => {
    upstreamNames(loopback());
    for (const token of ['http://169.254.169.254/latest/meta-data/iam/security-credentials/', 'https://169.254.169.254/token', 'https://[fe80::1]/token']) {
      serverLists({ token_endpoint: token });
      const err = await refused(client());
      assert.equal(err.code, 'SWB_UPSTREAM_UNAVAILABLE');
      assert.match(err.message, /token_endpoint/);
      assert.match(err.message, /link-local/);
      assert.ok(err.message.includes(new URL(token).host), err.message);
      assert.doesNotMatch(err.message, /sekrit/);
    }
  });

  it('a plain-http endpoint on a host that is not loopback, or an authorization endpoint of another scheme, is refused', async () => {
    upstreamNames(loopback());
    for (const endpoints of [{ token_endpoint: `http://as.example.test:${port}/token` }, { authorization_endpoint: `http://as.example.test:${port}/authorize` }, { authorization_endpoint: 'javascript:alert(1)' }]) {
      serverLists(endpoints);
      const err = await refused(client());
      assert.match(err.message, /https/, err.message);
      assert.ok(err.message.includes(Object.values(endpoints)[0]!), err.message);
    }
  });

  it('an upstream naming a plain-http authorization server on a host that is not loopback is refused before its metadata is fetched', async () => {
    upstreamNames(`http://as.example.test:${port}`);
    serverLists({});
    const err = await refused(client());
    assert.match(err.message, /http:\/\/as\.example\.test/);
    assert.match(err.message, /https/);
    assert.deepEqual(seen.filter((s) => s.includes('as.example.test')), []);
  });

  it('protected-resource metadata that describes another resource is not used (RFC 9728 §3.3)', async () => {
    upstreamNames(loopback(), 'https://elsewhere.example/mcp');
    serverLists({});
    const err = await refused(client());
    assert.match(err.message, /https:\/\/elsewhere\.example\/mcp/);
    assert.deepEqual(seen.filter((s) => s.includes('oauth-authorization-server')), [], 'no authorization server it names is asked');
  });

  it('authorization server metadata naming another issuer is refused (RFC 8414 §3.3)', async () => {
    upstreamNames(loopback());
    serverLists({ issuer: 'https://login.example' });
    assert.match((await refused(client())).message, /names issuer https:\/\/login\.example/);
  });

  it('still used: loopback http throughout, https endpoints on another origin, and root metadata describing the origin', async () => {
    upstreamNames(loopback());
    serverLists({});
    assert.match(await authorizeUrl(client()), new RegExp(`^${loopback()}/authorize\\?`));
    serverLists({ authorization_endpoint: 'https://accounts.example/o/oauth2/auth', token_endpoint: 'https://oauth2.example/token' });
    assert.match(await authorizeUrl(client()), /^https:\/\/accounts\.example\/o\/oauth2\/auth\?/);
    docs.delete('/.well-known/oauth-protected-resource/mcp');
    docs.set('/.well-known/oauth-protected-resource', (origin) => ({ resource: origin, authorization_servers: [loopback()] }));
    assert.match(await authorizeUrl(client()), /^https:\/\/accounts\.example\//);
  });

  // A server whose host answers every unknown path with a 200 page (a web app's catch-all) at the RFC 8414
  // URL: that page was taken for metadata naming no issuer, and OpenID discovery, where the server's real
  // metadata is, was never tried (consent answered 502).
  it('a page that is no JSON at the RFC 8414 URL is passed over for OpenID discovery', async () => {
    upstreamNames(loopback());
    docs.set('/.well-known/oauth-authorization-server', () => '<!doctype html><html><body>Welcome</body></html>');
    docs.set('/.well-known/openid-configuration', (origin) => ({ issuer: origin, authorization_endpoint: `${origin}/oidc/authorize`, token_endpoint: `${origin}/oidc/token` }));
    assert.match(await authorizeUrl(client()), new RegExp(`^${loopback()}/oidc/authorize\\?`));
  });

  it("still used: plain http on the origin the operator configured (the upstream's or the authorization server's)", async () => {
    const mine = `http://as.example.test:${port}`;
    upstreamNames(mine);
    serverLists({});
    assert.match(await authorizeUrl(client({ url: `${mine}/mcp` })), /^http:\/\/as\.example\.test:\d+\/authorize\?/);
    assert.match(await authorizeUrl(client({ authorizationServer: mine })), /^http:\/\/as\.example\.test:\d+\/authorize\?/);
  });

  it('a configured authorizationServer is the one used, whatever the upstream names', async () => {
    upstreamNames('https://attacker.example');
    serverLists({});
    assert.match(await authorizeUrl(client({ authorizationServer: loopback() })), new RegExp(`^${loopback()}/authorize\\?`));
    assert.deepEqual(seen.filter((s) => s.includes('oauth-protected-resource')), [], "the upstream's metadata is not read");
  });
});
