// An issuer's key set behind HTTP Basic authentication, its user name and password written in
// auth.jwksUrl (https://user:secret@idp/jwks, as the admin API's redaction and the 503's wording expect):
// Node's fetch refuses to build a request from a URL with credentials (TypeError), so every fetch failed
// before it left the gateway and every client was answered 503, whatever the issuer would have said. The
// credentials now go as an Authorization: Basic header, the URL without them. Real HTTP on a real port.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Authenticator } from '../../../src/auth/authenticator.js';
import { parseConfig } from '../../../src/config/index.js';
import { ISSUER, makeKey, PUBLIC_URL, signToken, type TestKey } from '../../helpers/tokens.js';

const bearer = (t: string) => ({ authorization: [`Bearer ${t}`], tokenInQuery: false });

describe('a key set behind HTTP Basic authentication', () => {
  let key: TestKey;
  let server: http.Server;
  let port: number;
  /** The Authorization header of each fetch, and the URL it asked for. */
  const seen: { authorization: string | undefined; url: string | undefined }[] = [];

  before(async () => {
    key = await makeKey('basic');
    server = http.createServer((req, res) => {
      seen.push({ authorization: req.headers.authorization, url: req.url });
      const expected = `Basic ${Buffer.from('reader:p@ss:w/rd').toString('base64')}`;
      if (req.headers.authorization !== expected) return void res.writeHead(401, { 'www-authenticate': 'Basic realm="jwks"' }).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [key.publicJwk] }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('sends the user name and password of auth.jwksUrl as Basic credentials, and the token is accepted', async () => {
    const config = parseConfig(
      {
        server: { host: '127.0.0.1' },
        auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: `http://reader:p%40ss%3Aw%2Frd@127.0.0.1:${port}/jwks.json`, tokenCache: { maxEntries: 0 } },
        tenants: [{ name: 'acme', endpoints: ['/mcp'] }],
        upstreams: [{ name: 'u', transport: 'stdio', command: 'true', sandbox: 'none' }],
        endpoints: [{ path: '/mcp', upstreams: ['u'] }],
      },
      'inline',
    );
    const auth = new Authenticator(config.auth, [PUBLIC_URL]);
    const principal = await auth.authenticate(bearer(await signToken(key, { aud: PUBLIC_URL })));
    assert.equal(principal.subject, 'alice');
    assert.deepEqual(seen, [{ authorization: `Basic ${Buffer.from('reader:p@ss:w/rd').toString('base64')}`, url: '/jwks.json' }]);
  });
});
