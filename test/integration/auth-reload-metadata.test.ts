// A reload that moves the gateway to another identity provider (found by a review): auth.issuer is applied by
// a reload (tokens of the new issuer are accepted, the old one's refused), but the protected resource metadata
// (RFC 9728) went on naming the issuer of the start as the authorization server when
// auth.authorizationServers is unset (the usual case). Every OAuth client that discovered the gateway from
// then on signed in at the old issuer, got tokens the gateway refused (401), and tried again, until a
// restart. The metadata now names the issuer in force. Real gateway from a real file, real HTTP.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileGateway, type FileGateway } from '../helpers/file-gateway.js';
import { FIXTURE } from '../helpers/gateway.js';
import { JwksServer, makeKey, mcpRequest, initializeBody, PUBLIC_URL, signToken, type TestKey } from '../helpers/tokens.js';

const OLD_ISSUER = 'https://old-idp.test';
const NEW_ISSUER = 'https://new-idp.test';

describe('auth: a reload that changes auth.issuer', () => {
  let key: TestKey;
  let jwks: JwksServer;
  let fg: FileGateway;

  const doc = (issuer: string) => ({
    server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
    metrics: { enabled: false },
    logging: { level: process.env.LOG_LEVEL ?? 'silent' },
    auth: { mode: 'jwt', issuer, jwksUrl: jwks.url },
    tenants: [{ name: 'acme', endpoints: ['*'] }],
    upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
    endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
  });

  before(async () => {
    key = await makeKey('k1');
    jwks = await JwksServer.start([key.publicJwk]);
    fg = await fileGateway('swb-issuer-reload-', doc(OLD_ISSUER));
  });
  after(async () => {
    await fg?.close();
    await jwks?.close();
  });

  const servers = async (path: string) => ((await (await fetch(`${fg.gw.base}${path}`)).json()) as { authorization_servers?: string[] }).authorization_servers;

  it('names the new issuer in the protected resource metadata, whose tokens are the ones accepted', async () => {
    assert.deepEqual(await servers('/.well-known/oauth-protected-resource/mcp'), [OLD_ISSUER]);
    fg.write(doc(NEW_ISSUER));
    const { report } = await fg.app.reload('test');
    assert.equal(report.result, 'applied', JSON.stringify(report));
    // The verification follows the file...
    assert.equal((await mcpRequest(fg.gw, initializeBody(), { token: await signToken(key, { iss: NEW_ISSUER }) })).status, 200);
    assert.equal((await mcpRequest(fg.gw, initializeBody(), { token: await signToken(key, { iss: OLD_ISSUER }) })).status, 401);
    // ...and so does where clients are sent for a token.
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      assert.deepEqual(await servers(path), [NEW_ISSUER], path);
    }
  });
});
