// A token that names no `kid`, with both static keys (auth.keys) and the issuer's key set (auth.jwksUrl)
// configured: every key of its type is a candidate, the static ones first, then the issuer's (a real key
// set served on a loopback port). It was tried against a matching static key only, so a valid token
// from an issuer that omits kid was refused. A forged one must not make the set be fetched again.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Authenticator } from '../../../src/auth/authenticator.js';
import { authRefusal, bearer, jwtAuthenticator } from '../../helpers/authenticator.js';
import { JwksServer, makeKey, signToken, type TestKey } from '../../helpers/tokens.js';

describe('a token with no kid, static keys and a JWKS both configured', () => {
  let dir: string;
  let staticKey: TestKey;
  let issuerKeys: TestKey[];
  let stranger: TestKey;
  let jwks: JwksServer;

  const authenticator = (): Authenticator => jwtAuthenticator(dir, { keys: [join(dir, 'static.pem')], jwksUrl: jwks.url });

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
      const err = await authRefusal(auth.authenticate(bearer(await signToken(stranger, { kid: null, sub: `s${i}` }))));
      assert.equal(err.status, 401);
      assert.equal(err.reason, 'signature');
    }
    assert.equal(jwks.fetches, before, 'forged tokens with no kid fetched the key set again');
  });

  it('naming a kid, still goes to the one key it names', async () => {
    const auth = authenticator();
    const principal = await auth.authenticate(bearer(await signToken(issuerKeys[1]!)));
    assert.equal(principal.subject, 'alice');
    const err = await authRefusal(auth.authenticate(bearer(await signToken(stranger, { kid: 'idp-1' }))));
    assert.equal(err.reason, 'signature');
  });
});
