// The scope hint of a 401 (MCP authorization 2025-11-25, scope selection strategy): a client asks for the
// scopes a 401's WWW-Authenticate names and falls back to every scope of scopes_supported only when it
// names none. An endpoint's configured scopes (endpoints[].scopes) are named there, and required (403
// insufficient_scope naming them); an endpoint without any names none. Real gateway, real HTTP, real JWKS.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { ISSUER, JwksServer, PUBLIC_URL, initializeBody, makeKey, mcpRequest, openSession, parseChallenge, signToken, type TestKey } from '../helpers/tokens.js';

describe('endpoint scopes in the challenge', () => {
  let jwks: JwksServer;
  let key: TestKey;
  let gw: RunningGateway;

  before(async () => {
    key = await makeKey('k1');
    jwks = await JwksServer.start([key.publicJwk]);
    gw = await startGateway({
      server: { publicUrl: PUBLIC_URL },
      auth: { mode: 'jwt', issuer: ISSUER, audience: [PUBLIC_URL], jwksUrl: jwks.url, scopesSupported: ['mcp:use', 'mcp:admin', 'repo:write'] },
      tenants: [{ name: 'acme', endpoints: ['*'], tools: { allow: [{ match: 'test_error_handling', scopes: ['tools:errors'] }, '*'] } }],
      upstreams: [{ name: 'fixture', transport: 'stdio', ...FIXTURE, sharing: 'shared' }],
      endpoints: [
        { path: '/mcp', upstreams: ['fixture'], scopes: ['mcp:use', 'mcp:read'] },
        { path: '/open', upstreams: ['fixture'] },
      ],
    });
  });
  after(async () => {
    await gw?.close();
    await jwks?.close();
  });

  const challenge = (r: { headers: Headers }) => parseChallenge(r.headers.get('www-authenticate')).params;

  it('a 401 without a token, or with an invalid one, names the endpoint\'s scopes (and only on 401s)', async () => {
    const bare = await mcpRequest(gw, initializeBody());
    assert.equal(bare.status, 401, bare.text);
    assert.equal(challenge(bare).scope, 'mcp:use mcp:read');
    const expired = await mcpRequest(gw, initializeBody(), { token: await signToken(key, { expIn: -600 }) });
    assert.equal(expired.status, 401, expired.text);
    assert.equal(challenge(expired).error, 'invalid_token');
    assert.equal(challenge(expired).scope, 'mcp:use mcp:read');
    // The legacy stream of the endpoint names them too (with the gateway's own metadata).
    const sse = await fetch(`${gw.base}/sse`, { headers: { accept: 'text/event-stream' } });
    await sse.text();
    assert.equal(sse.status, 401);
    assert.equal(challenge(sse).scope, 'mcp:use mcp:read');
    assert.equal(challenge(sse).resource_metadata, `${PUBLIC_URL}/.well-known/oauth-protected-resource`);
  });

  // RFC 9728 §2: scopes_supported lists the scopes used to request access to the resource, and a client with
  // no scope in its challenge asks for all of them (MCP 2025-11-25): an endpoint's document that left out the
  // scopes the endpoint requires got such a client a token refused 403 insufficient_scope.
  it("each document's scopes_supported lists the scopes its resource requires, with auth.scopesSupported", async () => {
    const supported = async (path: string) => ((await (await fetch(`${gw.base}/.well-known/oauth-protected-resource${path}`)).json()) as { scopes_supported?: string[] }).scopes_supported;
    assert.deepEqual(await supported('/mcp'), ['mcp:use', 'mcp:admin', 'repo:write', 'mcp:read']);
    assert.deepEqual(await supported('/open'), ['mcp:use', 'mcp:admin', 'repo:write']);
    // The gateway's own (the legacy paths' resource, whose tokens every endpoint takes): every endpoint's.
    assert.deepEqual(await supported(''), ['mcp:use', 'mcp:admin', 'repo:write', 'mcp:read']);
  });

  it('an endpoint with no scopes configured names none: the client falls back to scopes_supported', async () => {
    const r = await mcpRequest(gw, initializeBody(), { path: '/open' });
    assert.equal(r.status, 401, r.text);
    assert.equal('scope' in challenge(r), false, r.headers.get('www-authenticate') ?? '');
  });

  it('a token lacking one of them is answered 403 insufficient_scope naming the missing one; with them it is served', async () => {
    const narrow = await mcpRequest(gw, initializeBody(), { token: await signToken(key, { scope: 'mcp:use' }) });
    assert.equal(narrow.status, 403, narrow.text);
    assert.equal(challenge(narrow).error, 'insufficient_scope');
    assert.equal(challenge(narrow).scope, 'mcp:read');
    const wide = await mcpRequest(gw, initializeBody(), { token: await signToken(key, { scope: 'mcp:read mcp:use' }) });
    assert.equal(wide.status, 200, wide.text);
    const open = await mcpRequest(gw, initializeBody(), { path: '/open', token: await signToken(key) });
    assert.equal(open.status, 200, open.text);
  });

  it("a tool's step-up names the endpoint's scopes with the tool's: a client asking for the challenge's scopes alone keeps the endpoint", async () => {
    const token = await signToken(key, { scope: 'mcp:use mcp:read' });
    const sid = await openSession(gw, token);
    const r = await mcpRequest(gw, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'test_error_handling', arguments: {} } }, { token, sid });
    assert.equal(r.status, 403, r.text);
    assert.equal(challenge(r).error, 'insufficient_scope');
    assert.equal(challenge(r).scope, 'mcp:use mcp:read tools:errors');
    assert.match(r.json?.error?.message ?? '', /needs the scope tools:errors$/);
  });
});
