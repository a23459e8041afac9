// The protected resource metadata of a gateway served under a path of its public URL (server.publicUrl
// https://switchboard.test/mcp-gw, a reverse proxy passing /mcp-gw/... on without the prefix). RFC 9728 §3.1
// puts a resource's well-known URI between the host and the path: for https://switchboard.test/mcp-gw/mcp that
// is https://switchboard.test/.well-known/oauth-protected-resource/mcp-gw/mcp, which a client builds itself when
// it has no challenge's resource_metadata (the MCP spec's discovery; the official SDK's
// discoverOAuthProtectedResourceMetadata). A proxy routing that URL to the gateway passes it on as it is (the
// prefix is not at its start), and the gateway answered 404: it served only
// /.well-known/oauth-protected-resource<endpoint path>, what the documented <publicUrl>/.well-known/… form (the
// one the challenge names) reaches it as. Both now answer. The proxy is played by the fetch the SDK is given.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { discoverOAuthProtectedResourceMetadata, extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { ISSUER, JwksServer, makeKey, PUBLIC_URL, startJwtFixtureGateway } from '../helpers/tokens.js';

const PREFIX = '/mcp-gw';
const WELL_KNOWN = '/.well-known/oauth-protected-resource';

describe('protected resource metadata under a path prefix of the public URL', () => {
  let jwks: JwksServer;
  let gw: RunningGateway;

  before(async () => {
    jwks = await JwksServer.start([(await makeKey('k1')).publicJwk]);
    gw = await startJwtFixtureGateway(jwks.url, { publicUrl: `${PUBLIC_URL}${PREFIX}` });
  });
  after(async () => {
    await gw?.close();
    await jwks?.close();
  });

  /**
   * The reverse proxy: <public origin>/mcp-gw/... goes to the gateway without the prefix, the resource
   * metadata of what lies under the prefix (/.well-known/oauth-protected-resource/mcp-gw...) as it is,
   * anything else (the host's root) is another application's.
   */
  const viaProxy = async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const path = new URL(url).pathname;
    if (path.startsWith(`${PREFIX}/`)) return fetch(new URL(path.slice(PREFIX.length), gw.base), init);
    if (path === `${WELL_KNOWN}${PREFIX}` || path.startsWith(`${WELL_KNOWN}${PREFIX}/`)) return fetch(new URL(path, gw.base), init);
    return new Response('not the gateway', { status: 404 });
  };

  it("the SDK's discovery without a challenge (RFC 9728 §3.1 form) finds the endpoint's metadata", async () => {
    const metadata = await discoverOAuthProtectedResourceMetadata(`${PUBLIC_URL}${PREFIX}/mcp`, undefined, viaProxy);
    assert.equal(metadata.resource, `${PUBLIC_URL}${PREFIX}/mcp`);
    assert.deepEqual(metadata.authorization_servers, [ISSUER]);
  });

  it("the gateway's own document (resource <publicUrl>) answers at the RFC form too", async () => {
    const r = await viaProxy(`${PUBLIC_URL}${WELL_KNOWN}${PREFIX}`);
    assert.equal(r.status, 200);
    assert.equal(((await r.json()) as { resource: string }).resource, `${PUBLIC_URL}${PREFIX}`);
    assert.equal(r.headers.get('access-control-allow-origin'), '*');
  });

  it('the form the challenge names (<publicUrl>/.well-known/…, documented) still answers through the proxy', async () => {
    const refused = await viaProxy(`${PUBLIC_URL}${PREFIX}/mcp`, { method: 'POST', headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' }, body: '{}' });
    await refused.body?.cancel();
    assert.equal(refused.status, 401);
    const { resourceMetadataUrl } = extractWWWAuthenticateParams(refused);
    assert.equal(resourceMetadataUrl?.href, `${PUBLIC_URL}${PREFIX}${WELL_KNOWN}/mcp`);
    const metadata = await discoverOAuthProtectedResourceMetadata(`${PUBLIC_URL}${PREFIX}/mcp`, { resourceMetadataUrl }, viaProxy);
    assert.equal(metadata.resource, `${PUBLIC_URL}${PREFIX}/mcp`);
  });

  it('a path that is no endpoint under the prefix, or the prefix alone without it, is not found', async () => {
    for (const path of [`${WELL_KNOWN}${PREFIX}/nope`, `${WELL_KNOWN}${PREFIX}x/mcp`, `${WELL_KNOWN}${PREFIX}${PREFIX}`]) {
      const r = await fetch(new URL(path, gw.base));
      await r.body?.cancel();
      assert.equal(r.status, 404, path);
    }
  });
});
