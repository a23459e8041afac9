// A key the gateway holds but cannot verify with (an RSA key under 2048 bits, which jose refuses; a JWK
// whose numbers WebCrypto cannot import), in auth.keys or in the issuer's key set, named by a token's kid.
// The failure was taken for the key set being out of reach: 503 "the issuer's key set cannot be fetched
// right now; retry shortly", with Retry-After, even with no auth.jwksUrl at all, and any forged token
// naming that kid got it. It is a token no usable key verifies: 401 invalid_token. A key set really out
// of reach is still 503.
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { JWK } from 'jose';
import type { Authenticator } from '../../../src/auth/authenticator.js';
import { checkConfigFile } from '../../../src/config-check.js';
import { authRefusal, bearer, jwtAuthenticator } from '../../helpers/authenticator.js';
import { ISSUER, JwksServer, makeKey, PUBLIC_URL, signToken, type TestKey } from '../../helpers/tokens.js';

const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');

/** An RS256 token signed by node:crypto (jose refuses to sign with a key under 2048 bits). */
function rs256(privateKey: KeyObject, kid: string): string {
  const input = `${b64({ alg: 'RS256', kid, typ: 'JWT' })}.${b64({ iss: ISSUER, aud: PUBLIC_URL, sub: 'alice', tenant: 'acme', exp: Math.floor(Date.now() / 1000) + 300 })}`;
  return `${input}.${sign('sha256', Buffer.from(input), privateKey).toString('base64url')}`;
}

describe('a key the gateway holds but cannot use, named by a token', () => {
  let dir: string;
  let good: TestKey;
  let small: { privateKey: KeyObject; jwk: JWK };
  /** An RSA JWK whose modulus WebCrypto refuses to import. */
  const broken: JWK = { kty: 'RSA', kid: 'broken', alg: 'RS256', use: 'sig', n: 'AAAA', e: 'AQAB' };
  let jwks: JwksServer;

  const authenticator = (auth: Record<string, unknown>): Authenticator => jwtAuthenticator(dir, auth);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'swb-unusable-'));
    good = await makeKey('good');
    const pair = generateKeyPairSync('rsa', { modulusLength: 1024 });
    small = { privateKey: pair.privateKey, jwk: { ...(pair.publicKey.export({ format: 'jwk' }) as JWK), kid: 'small', alg: 'RS256', use: 'sig' } };
    const keys = [good.publicJwk, small.jwk, broken];
    writeFileSync(join(dir, 'keys.json'), JSON.stringify({ keys }));
    jwks = await JwksServer.start(keys);
  });
  after(async () => {
    await jwks.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const where of ['auth.keys', 'auth.jwksUrl'] as const) {
    it(`in ${where}: 401 invalid_token, not 503 as if a key set were out of reach; the other keys still verify`, async () => {
      const auth = authenticator(where === 'auth.keys' ? { keys: [join(dir, 'keys.json')] } : { jwksUrl: jwks.url });
      assert.equal((await auth.authenticate(bearer(await signToken(good)))).subject, 'alice');
      for (const token of [rs256(small.privateKey, 'small'), rs256(small.privateKey, 'broken')]) {
        const err = await authRefusal(auth.authenticate(bearer(token)));
        assert.equal(err.status, 401, err.message);
        assert.equal(err.error, 'invalid_token');
        assert.equal(err.reason, 'unusable_key');
      }
    });
  }

  // Read at load without a word: the operator learnt of such a key only from clients refused 401.
  it('in auth.keys: check-config, serve and a reload warn, naming the file and the key, never its numbers; the good key is not named', () => {
    const file = join(dir, 'config.yaml');
    const config = {
      server: { host: '127.0.0.1' },
      auth: { mode: 'jwt', issuer: ISSUER, keys: ['keys.json'] },
      tenants: [{ name: 'acme', endpoints: ['/mcp'] }],
      upstreams: [{ name: 'u', transport: 'stdio', command: 'node', sandbox: 'none' }],
      endpoints: [{ path: '/mcp', upstreams: ['u'] }],
    };
    writeFileSync(file, JSON.stringify(config));
    const said = checkConfigFile(file).warnings.filter((w) => w.startsWith('auth.keys'));
    assert.equal(said.length, 2, said.join('\n'));
    assert.match(said[0]!, /^auth\.keys\[0\]: .*keys\.json: kid "small" can never verify a token \(it is an RSA key of 1024 bits/);
    assert.match(said[1]!, /^auth\.keys\[0\]: .*keys\.json: kid "broken" can never verify a token/);
    for (const w of said) {
      assert.match(w, /unusable_key/);
      assert.equal(w.includes(small.jwk.n!), false, 'the modulus is not written out');
    }
  });

  it('a key set that cannot be reached is still 503', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const auth = authenticator({ jwksUrl: `http://127.0.0.1:${port}/jwks.json` });
    const err = await authRefusal(auth.authenticate(bearer(await signToken(good))));
    assert.equal(err.status, 503, err.message);
    assert.equal(err.reason, 'jwks_unavailable');
  });
});
