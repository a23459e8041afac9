// A token that names no `kid`, with both static keys (auth.keys) and the issuer's key set (auth.jwksUrl)
// configured: every key of its type is a candidate, the static ones first, then the issuer's (a real key
// set served on a loopback port). It was tried against a matching static key only, so a valid token
// from an issuer that omits kid was refused. A forged one must not make the set be fetched again.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AuthError } from '../../../src/auth/auth-error.js';
import { Authenticator } from '../../../src/auth/authenticator.js';
import type { Principal } from '../../../src/auth/principal.js';
import { parseConfig } from '../../../src/config/index.js';
import { ISSUER, JwksServer, makeKey, PUBLIC_URL, signToken, type TestKey } from '../../helpers/tokens.js';

const bearer = (t: string) => ({ authorization: [`Bearer ${t}`], tokenInQuery: false });

async function refusal(p: Principal | Promise<Principal>): Promise<AuthError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof AuthError, String(err));
    return err;
  }
  assert.fail('the token was accepted');
}

describe('a token with no kid, static keys and a JWKS both configured', () => {
  let dir: string;
  let staticKey: TestKey;
  let issuerKeys: TestKey[];
  let stranger: TestKey;
  let jwks: JwksServer;

  const authenticator = (): Authenticator => {
    const config = parseConfig(
      {
        server: { host: '127.0.0.1' },
        auth: { mode: 'jwt', issuer: ISSUER, keys: [join(dir, 'static.pem')], jwksUrl: jwks.url, jwksCooldownMs: 60_000, tokenCache: { maxEntries: 0 } },
        tenants: [{ name: 'acme', endpoints: ['/mcp'] }],
        upstreams: [{ name: 'u', transport: 'stdio', command: 'node', sandbox: 'none' }],
        endpoints: [{ path: '/mcp', upstreams: ['u'] }],
      },
      'test',
      {},
      dir,
    );
    return new Authenticator(config.auth, [PUBLIC_URL]);
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'swb-nokid-'));
    staticKey = await makeKey('static');
    issuerKeys = [await makeKey('idp-1'), await makeKey('idp-2')];
    stranger = await makeKey('stranger');
    writeFileSync(join(dir, 'static.pem'), staticKey.spki);
    jwks = await JwksServer.start(issuerKeys.map((k) => k.publicJwk));
  });
  after(async () => {
    await jwks.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is accepted when signed by one of the issuer's keys", async () => {
    const auth = authenticator();
    for (const key of issuerKeys) {
      const principal = await auth.authenticate(bearer(await signToken(key, { kid: null, sub: key.kid })));
      assert.equal(principal.subject, key.kid);
    }
  });

  it('is accepted when signed by the static key, without fetching the key set', async () => {
    const auth = authenticator();
    const before = jwks.fetches;
    const principal = await auth.authenticate(bearer(await signToken(staticKey, { kid: null })));
    assert.equal(principal.subject, 'alice');
    assert.equal(jwks.fetches, before);
  });

  it('is refused (401, bad signature) when signed by no trusted key, and forged ones do not refetch the set', async () => {
    const auth = authenticator();
    await auth.authenticate(bearer(await signToken(issuerKeys[0]!, { kid: null })));
    const before = jwks.fetches;
    for (let i = 0; i < 5; i++) {
      const err = await refusal(auth.authenticate(bearer(await signToken(stranger, { kid: null, sub: `s${i}` }))));
      assert.equal(err.status, 401);
      assert.equal(err.reason, 'signature');
    }
    assert.equal(jwks.fetches, before, 'forged tokens with no kid fetched the key set again');
  });

  it('naming a kid, still goes to the one key it names', async () => {
    const auth = authenticator();
    const principal = await auth.authenticate(bearer(await signToken(issuerKeys[1]!)));
    assert.equal(principal.subject, 'alice');
    const err = await refusal(auth.authenticate(bearer(await signToken(stranger, { kid: 'idp-1' }))));
    assert.equal(err.reason, 'signature');
  });
});
