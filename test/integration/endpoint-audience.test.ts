// RFC 8707 / the MCP authorization spec: each endpoint is a protected resource of its own, published as
// such (<publicUrl>/.well-known/oauth-protected-resource<path>, resource <publicUrl><path>), and a client
// asks the authorization server for a token for that resource, which becomes its aud. A token issued for
// one endpoint must not be taken by another: the authorization server may have granted it to a client, or
// with a consent, meant for that endpoint alone. A token for the gateway as a whole (<publicUrl>, or an
// audience configured that names no endpoint) is accepted on every endpoint its tenant is granted.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { ISSUER, PUBLIC_URL, initializeBody, makeKey, mcpRequest, parseChallenge, signToken, type TestKey } from '../helpers/tokens.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

describe("a token issued for one endpoint's resource is refused on another", () => {
  let dir: string;
  let key: TestKey;
  let gw: RunningGateway;
  let explicit: RunningGateway;

  const config = (audience: string[]) => ({
    server: { publicUrl: PUBLIC_URL },
    auth: { mode: 'jwt' as const, issuer: ISSUER, keys: [join(dir, 'k.pem')], audience },
    tenants: [{ name: 'acme', endpoints: ['/mcp', '/other'] }],
    upstreams: [{ name: 'fixture', transport: 'stdio' as const, ...FIXTURE, sharing: 'shared' as const }],
    endpoints: [
      { path: '/mcp', upstreams: ['fixture'] },
      { path: '/other', upstreams: ['fixture'] },
    ],
  });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'swb-endpoint-aud-'));
    key = await makeKey('k1');
    writeFileSync(join(dir, 'k.pem'), key.spki);
    gw = await startGateway(config([]));
    explicit = await startGateway(config([PUBLIC_URL, `${PUBLIC_URL}/mcp`, `${PUBLIC_URL}/other`, 'api://switchboard']));
  });
  after(async () => {
    await gw?.close();
    await explicit?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const status = async (g: RunningGateway, path: string, aud: string | string[]) => {
    const r = await mcpRequest(g, initializeBody(), { path, token: await signToken(key, { aud }) });
    return { status: r.status, challenge: r.headers instanceof Headers ? r.headers.get('www-authenticate') : undefined, text: r.text };
  };

  it('default audiences: a token for /other on /mcp is 401 invalid_token naming /mcp\'s metadata, so the client signs in for /mcp', async () => {
    for (const aud of [`${PUBLIC_URL}/other`, [`${PUBLIC_URL}/other`, 'https://elsewhere.test']]) {
      const r = await status(gw, '/mcp', aud);
      assert.equal(r.status, 401, `${JSON.stringify(aud)}: ${r.text}`);
      const c = parseChallenge(r.challenge);
      assert.equal(c.params.error, 'invalid_token');
      assert.equal(c.params.resource_metadata, `${PUBLIC_URL}/.well-known/oauth-protected-resource/mcp`);
    }
    // And the other way round; the same token (kept verified) is still taken where it belongs.
    assert.equal((await status(gw, '/other', `${PUBLIC_URL}/mcp`)).status, 401);
    const forOther = await signToken(key, { aud: `${PUBLIC_URL}/other` });
    assert.equal((await mcpRequest(gw, initializeBody(), { path: '/mcp', token: forOther })).status, 401);
    assert.equal((await mcpRequest(gw, initializeBody(), { path: '/other', token: forOther })).status, 200);
  });

  it("default audiences: each endpoint's own token, a token for the gateway, and one naming both endpoints are accepted", async () => {
    assert.equal((await status(gw, '/mcp', `${PUBLIC_URL}/mcp`)).status, 200);
    assert.equal((await status(gw, '/other', `${PUBLIC_URL}/other`)).status, 200);
    for (const path of ['/mcp', '/other']) {
      assert.equal((await status(gw, path, PUBLIC_URL)).status, 200, path);
      assert.equal((await status(gw, path, `${PUBLIC_URL}/`)).status, 200, `${path}: the public URL's href`);
      assert.equal((await status(gw, path, [`${PUBLIC_URL}/mcp`, `${PUBLIC_URL}/other`])).status, 200, path);
    }
  });

  it('configured audiences: one naming an endpoint is that endpoint\'s; the others are the gateway\'s', async () => {
    assert.equal((await status(explicit, '/mcp', `${PUBLIC_URL}/other`)).status, 401);
    assert.equal((await status(explicit, '/other', `${PUBLIC_URL}/other`)).status, 200);
    for (const path of ['/mcp', '/other']) assert.equal((await status(explicit, path, 'api://switchboard')).status, 200, path);
  });
});
