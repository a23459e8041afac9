// A static key that names no kid (a PEM file, which cannot name one; a JWK written without "kid") and a
// token that names one, as nearly every issuer's do (Keycloak, Auth0 and Entra all put kid in the header,
// and offer their public key as PEM). jose matches a token's kid only against keys carrying the same kid,
// so such a key verified no token naming a kid: every client was refused "no trusted key matches it".
// A key that does name its kid still verifies only tokens naming it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Authenticator } from '../../../src/auth/authenticator.js';
import { devTokenRefusal, signDevToken } from '../../../src/auth/dev-token.js';
import { authRefusal, bearer, jwtAuthenticator } from '../../helpers/authenticator.js';
import { ISSUER, JwksServer, makeKey, PUBLIC_URL, signToken, type TestKey } from '../../helpers/tokens.js';

describe('a static key naming no kid, a token naming one', () => {
  let dir: string;
  let pemKey: TestKey;
  let namedKey: TestKey;
  let issuerKey: TestKey;
  let jwks: JwksServer;

  const authenticator = (auth: Record<string, unknown>): Authenticator => jwtAuthenticator(dir, auth);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'swb-unnamed-'));
    pemKey = await makeKey('idp-key-2026');
    namedKey = await makeKey('named');
    issuerKey = await makeKey('from-jwks');
    writeFileSync(join(dir, 'idp.pem'), pemKey.spki);
    const { kid: _kid, ...unnamedJwk } = pemKey.publicJwk;
    writeFileSync(join(dir, 'idp.jwk.json'), JSON.stringify(unnamedJwk));
    writeFileSync(join(dir, 'named.jwk.json'), JSON.stringify(namedKey.publicJwk));
    jwks = await JwksServer.start([issuerKey.publicJwk]);
  });
  after(async () => {
    await jwks.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is verified by a PEM key, and by a JWK without kid', async () => {
    for (const file of ['idp.pem', 'idp.jwk.json']) {
      const principal = await authenticator({ keys: [join(dir, file)] }).authenticate(bearer(await signToken(pemKey, { sub: file })));
      assert.equal(principal.subject, file);
    }
  });

  it('is verified by the unnamed key beside a named one, and the named key still only for its own kid', async () => {
    const auth = authenticator({ keys: [join(dir, 'named.jwk.json'), join(dir, 'idp.pem')] });
    assert.equal((await auth.authenticate(bearer(await signToken(pemKey, { sub: 'pem' })))).subject, 'pem');
    assert.equal((await auth.authenticate(bearer(await signToken(namedKey, { sub: 'named' })))).subject, 'named');
    // Signed by the named key but naming another kid: that key is not a candidate for it.
    assert.equal((await authRefusal(auth.authenticate(bearer(await signToken(namedKey, { kid: 'other' }))))).status, 401);
  });

  it("with the issuer's JWKS too: its tokens still verify, and a PEM-signed one without fetching it", async () => {
    const auth = authenticator({ keys: [join(dir, 'idp.pem')], jwksUrl: jwks.url });
    const before = jwks.fetches;
    assert.equal((await auth.authenticate(bearer(await signToken(pemKey, { sub: 'pem' })))).subject, 'pem');
    assert.equal(jwks.fetches, before);
    assert.equal((await auth.authenticate(bearer(await signToken(issuerKey, { sub: 'jwks' })))).subject, 'jwks');
  });

  it("is refused (401) when signed by none of them", async () => {
    const stranger = await makeKey('idp-key-2026');
    for (const keys of [['idp.pem'], ['idp.pem', 'named.jwk.json']]) {
      const err = await authRefusal(authenticator({ keys: keys.map((k) => join(dir, k)) }).authenticate(bearer(await signToken(stranger))));
      assert.equal(err.status, 401);
      assert.equal(err.error, 'invalid_token');
    }
  });

  it('a PEM file of several keys (a rotation: the new key appended) verifies with each, the EC parameters openssl writes skipped', async () => {
    // Only the file's first key was read: the appended one verified nothing (401), and said so nowhere.
    const rotated = await makeKey('idp-key-2027', 'ES256');
    const { exportPKCS8 } = await import('jose');
    const ecParameters = '-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n';
    writeFileSync(join(dir, 'bundle.pem'), `${pemKey.spki}\n${ecParameters}${await exportPKCS8(rotated.privateKey)}\n${pemKey.spki}`);
    const auth = authenticator({ keys: [join(dir, 'bundle.pem')] });
    for (const [key, kid] of [[pemKey, undefined], [rotated, undefined], [rotated, null]] as const) {
      const sub = `${key.kid}-${String(kid)}`;
      assert.equal((await auth.authenticate(bearer(await signToken(key, { sub, ...(kid === null ? { kid } : {}) })))).subject, sub);
    }
    const err = await authRefusal(auth.authenticate(bearer(await signToken(await makeKey('idp-key-2027', 'ES256')))));
    assert.equal(err.status, 401);
  });

  it('switchboard token says a dev key whose kid its PEM public half lacks is accepted', async () => {
    const privateFile = join(dir, 'dev-private.jwk.json');
    const { exportJWK } = await import('jose');
    writeFileSync(privateFile, JSON.stringify({ ...(await exportJWK(pemKey.privateKey)), kid: 'dev', alg: 'RS256' }));
    const jwt = await signDevToken({ keyFile: privateFile, issuer: ISSUER, audience: PUBLIC_URL, tenant: 'acme', subject: 'me', scopes: [], ttlSeconds: 60, tenantClaim: 'tenant' });
    assert.equal(await devTokenRefusal(jwt, privateFile, { keys: [join(dir, 'idp.pem')], algorithms: ['RS256'], jwksUrl: undefined }), undefined);
  });
});
