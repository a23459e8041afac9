// OAuth discovery by a client of the legacy HTTP+SSE transport (found by a review). A refused request on
// /sse or /messages named the metadata of the endpoint behind them (/.well-known/oauth-protected-resource/mcp,
// resource <publicUrl>/mcp), and a client checks that the resource it is told covers the URL it connects to
// before it asks for a token (RFC 9728 §7.3; the official SDK's selectResourceURL, which mcp-remote runs):
// <publicUrl>/sse is not under <publicUrl>/mcp, so every SDK-based client failed its sign-in there ("Protected
// resource …/mcp does not match expected …/sse") and could never connect to a gateway with auth over the
// legacy transport at its default paths. The legacy routes now name the gateway's own metadata (resource
// <publicUrl>, which covers them), and a token issued for that resource is accepted there. Real gateway,
// real HTTP, the SDK's own discovery and resource check.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { discoverOAuthProtectedResourceMetadata, extractWWWAuthenticateParams, selectResourceURL } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { ISSUER, JwksServer, makeKey, PUBLIC_URL, signToken, startJwtFixtureGateway, type TestKey } from '../helpers/tokens.js';

describe('legacy HTTP+SSE: OAuth discovery from a refused request', () => {
  let jwks: JwksServer;
  let key: TestKey;
  let gw: RunningGateway;

  before(async () => {
    key = await makeKey('sse-k1');
    jwks = await JwksServer.start([key.publicJwk]);
    // The default audiences: the public URL and each endpoint's URL.
    gw = await startJwtFixtureGateway(jwks.url, { publicUrl: PUBLIC_URL });
  });
  after(async () => {
    await gw?.close();
    await jwks?.close();
  });

  /** The gateway as the client reaches it, for a URL under the public one. */
  const local = (url: string | URL) => new URL(new URL(url).pathname, gw.base);
  /** What the SDK fetches during discovery: the gateway's own documents, under the public URL. */
  const viaGateway = (url: string | URL, init?: RequestInit) => fetch(local(url), init);

  for (const [path, method] of [
    ['/sse', 'GET'],
    ['/messages?sessionId=x', 'POST'],
  ] as const) {
    it(`${method} ${path}: the metadata named covers the URL, and a token for its resource is accepted`, async () => {
      const refused = await fetch(new URL(path, gw.base), { method, headers: { accept: 'text/event-stream', 'content-type': 'application/json' }, ...(method === 'POST' ? { body: '{}' } : {}) });
      await refused.body?.cancel();
      assert.equal(refused.status, 401);
      const { resourceMetadataUrl } = extractWWWAuthenticateParams(refused);
      assert.ok(resourceMetadataUrl, 'the challenge names the resource metadata');
      // The SDK's SSE transport names its stream's URL as the server, for its POSTs too.
      const server = `${PUBLIC_URL}/sse`;
      const metadata = await discoverOAuthProtectedResourceMetadata(server, { resourceMetadataUrl }, viaGateway);
      assert.deepEqual(metadata.authorization_servers, [ISSUER]);
      // What an SDK client does next: the resource must cover the URL it connects to.
      const resource = await selectResourceURL(server, {} as OAuthClientProvider, metadata);
      assert.ok(resource, 'a resource to ask the token for');
      // An authorization server honouring RFC 8707 issues the token for that resource.
      const token = await signToken(key, { aud: resource.href.replace(/\/$/, '') });
      const sse = await fetch(new URL('/sse', gw.base), { headers: { accept: 'text/event-stream', authorization: `Bearer ${token}` } });
      assert.equal(sse.status, 200, `the legacy stream opens with that token: HTTP ${sse.status}`);
      await sse.body?.cancel();
    });
  }

  // The SDK sends the resource as its URL's href, with the slash an empty path gets ("https://…/"), to the
  // authorization server (resource=, RFC 8707), which makes it the token's aud: the default audiences had
  // the public URL without that slash only, so every token a client got this way was refused (401, aud).
  it('a token whose aud is the resource exactly as the SDK asks for it (its href, "<publicUrl>/") is accepted', async () => {
    const server = `${PUBLIC_URL}/sse`;
    const metadata = await discoverOAuthProtectedResourceMetadata(server, { resourceMetadataUrl: new URL(`${PUBLIC_URL}/.well-known/oauth-protected-resource`) }, viaGateway);
    const resource = await selectResourceURL(server, {} as OAuthClientProvider, metadata);
    assert.equal(resource?.href, `${PUBLIC_URL}/`);
    const token = await signToken(key, { aud: resource.href });
    const sse = await fetch(new URL('/sse', gw.base), { headers: { accept: 'text/event-stream', authorization: `Bearer ${token}` } });
    await sse.body?.cancel();
    assert.equal(sse.status, 200, `the legacy stream opens with that token: HTTP ${sse.status}`);
  });

  it('a Streamable HTTP endpoint still names its own metadata', async () => {
    const refused = await fetch(new URL('/mcp', gw.base), { method: 'POST', headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' }, body: '{}' });
    await refused.body?.cancel();
    assert.equal(extractWWWAuthenticateParams(refused).resourceMetadataUrl?.href, `${PUBLIC_URL}/.well-known/oauth-protected-resource/mcp`);
  });
});
