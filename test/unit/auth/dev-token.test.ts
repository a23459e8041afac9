// `switchboard token` checks that the gateway would accept what it signs (devTokenRefusal). With two
// static keys of the key's type and a key naming no kid, the gateway tries each key (verifyJwt) and
// accepts the token; the check stopped at jose's "several keys match" and refused to print it.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { devTokenRefusal, signDevToken } from '../../../src/auth/dev-token.js';

describe('devTokenRefusal', () => {
  const dir = mkdtempSync(join(tmpdir(), 'swb-devtoken-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const pair = (name: string) => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    writeFileSync(join(dir, `${name}-private.jwk.json`), JSON.stringify(privateKey.export({ format: 'jwk' })));
    writeFileSync(join(dir, `${name}-public.jwk.json`), JSON.stringify(publicKey.export({ format: 'jwk' })));
    return { privateFile: join(dir, `${name}-private.jwk.json`), publicFile: join(dir, `${name}-public.jwk.json`) };
  };
  const sign = (keyFile: string) => signDevToken({ keyFile, issuer: 'https://x.example', audience: 'https://gw.example', tenant: 'dev', subject: 'me', scopes: [], ttlSeconds: 60, tenantClaim: 'tenant' });

  it('accepts a token of a key with no kid when several static keys of its type are configured, one of them its public half', async () => {
    const mine = pair('mine');
    const other = pair('other');
    const jwt = await sign(mine.privateFile);
    for (const keys of [[other.publicFile, mine.publicFile], [mine.publicFile, other.publicFile]]) {
      assert.equal(await devTokenRefusal(jwt, mine.privateFile, { keys, algorithms: ['EdDSA'], jwksUrl: undefined }), undefined, keys.join(', '));
    }
  });

  // The key's algorithm was guessed from its type alone (every EC key ES256): `switchboard token --key` with a
  // P-384 or P-521 key failed with jose's 'JWK "crv" does not match the requested algorithm'.
  it('signs with an EC key of any curve, by the algorithm its curve names', async () => {
    for (const [curve, alg] of [['P-384', 'ES384'], ['P-521', 'ES512'], ['P-256', 'ES256']] as const) {
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: curve });
      const privateFile = join(dir, `ec-${curve}-private.jwk.json`);
      const publicFile = join(dir, `ec-${curve}-public.jwk.json`);
      writeFileSync(privateFile, JSON.stringify(privateKey.export({ format: 'jwk' })));
      writeFileSync(publicFile, JSON.stringify(publicKey.export({ format: 'jwk' })));
      const jwt = await sign(privateFile);
      assert.equal(await devTokenRefusal(jwt, privateFile, { keys: [publicFile], algorithms: [alg], jwksUrl: undefined }), undefined, curve);
    }
  });

  it('still refuses when none of them is its public half', async () => {
    const mine = pair('mine2');
    const jwt = await sign(mine.privateFile);
    const refusal = await devTokenRefusal(jwt, mine.privateFile, { keys: [pair('a').publicFile, pair('b').publicFile], algorithms: ['EdDSA'], jwksUrl: undefined });
    assert.match(refusal ?? '', /none of auth\.keys/);
  });
});
