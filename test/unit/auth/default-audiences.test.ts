// The default token audiences (auth.audience unset) are server.publicUrl and each endpoint's URL under it,
// as written in the config. A client asks the authorization server for the resource its discovery found as
// that URL's href (the SDK: resource=<new URL(resource).href>, RFC 8707), which becomes the token's aud:
// a public URL written with its default port or a capital in its host was another string, and every token
// issued so was refused (401, aud), though it names the same resource.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Authenticator } from '../../../src/auth/authenticator.js';
import { parseConfig } from '../../../src/config/index.js';
import { audiencesOf } from '../../../src/edge-auth.js';
import { ISSUER, makeKey, signToken, type TestKey } from '../../helpers/tokens.js';

describe('default audiences: the public URL as written and as a client normalizes it', () => {
  let dir: string;
  let key: TestKey;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'swb-aud-'));
    key = await makeKey('k1');
    writeFileSync(join(dir, 'k.pem'), key.spki);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const config = (publicUrl: string) =>
    parseConfig(
      {
        server: { host: '127.0.0.1', publicUrl },
        auth: { mode: 'jwt', issuer: ISSUER, keys: [join(dir, 'k.pem')] },
        tenants: [{ name: 'acme', endpoints: ['/mcp'] }],
        upstreams: [{ name: 'u', transport: 'stdio', command: 'node', sandbox: 'none' }],
        endpoints: [{ path: '/mcp', upstreams: ['u'] }],
      },
      'test',
      {},
      dir,
    );

  for (const publicUrl of ['https://gw.example:443', 'https://GW.example', 'http://gw.example:80/prefix', 'https://gw.example']) {
    it(`${publicUrl}: a token for the endpoint's or the gateway's resource as its href is accepted`, async () => {
      const cfg = config(publicUrl);
      const auth = new Authenticator(cfg.auth, audiencesOf(cfg));
      for (const resource of [`${publicUrl}/mcp`, publicUrl]) {
        const aud = new URL(resource).href;
        const p = await auth.authenticate({ authorization: [`Bearer ${await signToken(key, { kid: null, aud })}`], tokenInQuery: false });
        assert.equal(p.subject, 'alice', aud);
      }
      assert.equal(audiencesOf(cfg)[0], publicUrl, 'the first is the public URL as written (switchboard token signs for it)');
    });
  }
});
