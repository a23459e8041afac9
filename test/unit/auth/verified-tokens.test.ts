import assert from 'node:assert/strict';
import { afterEach, describe, it, mock } from 'node:test';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { AuthError } from '../../../src/auth/auth-error.js';
import { Authenticator } from '../../../src/auth/authenticator.js';
import type { Principal } from '../../../src/auth/principal.js';
import { parseConfig } from '../../../src/config/index.js';

const SECRET = 'a-test-secret-of-at-least-thirty-two-characters';
const ISSUER = 'https://issuer.test';
const AUDIENCE = 'https://switchboard.test';

function authConfig(extra: Record<string, unknown> = {}) {
  const config = parseConfig(
    {
      server: { host: '127.0.0.1' },
      auth: { mode: 'jwt', issuer: ISSUER, hmacSecret: SECRET, allowHmac: true, algorithms: ['HS256'], clockToleranceSec: 0, ...extra },
      tenants: [{ name: 'acme', endpoints: ['/mcp'] }],
      upstreams: [{ name: 'u', transport: 'stdio', command: 'node', sandbox: 'none' }],
      endpoints: [{ path: '/mcp', upstreams: ['u'] }],
    },
    'test',
    {},
    '/tmp',
  );
  return config.auth;
}

async function token(o: { sub?: string; expIn?: number } = {}): Promise<string> {
  return new SignJWT({ tenant: 'acme', scope: 'read' })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(o.sub ?? 'alice')
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + (o.expIn ?? 300))
    .sign(new TextEncoder().encode(SECRET));
}

/** An authenticator that records each lookup: true for a token served from the cache. */
function authenticator(extra: Record<string, unknown> = {}): { auth: Authenticator; lookups: boolean[] } {
  const lookups: boolean[] = [];
  return { auth: new Authenticator(authConfig(extra), [AUDIENCE], (hit) => lookups.push(hit)), lookups };
}

const bearer = (t: string) => ({ authorization: [`Bearer ${t}`], tokenInQuery: false });

async function reason(p: Principal | Promise<Principal>): Promise<string> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof AuthError, String(err));
    return err.reason;
  }
  assert.fail('the token was accepted');
}

describe('verified tokens are kept', () => {
  afterEach(() => mock.timers.reset());

  it('a token verified once is answered at once (no promise) with the same frozen principal', async () => {
    const { auth, lookups } = authenticator();
    const t = await token();
    const first = auth.authenticate(bearer(t));
    assert.ok(first instanceof Promise, 'the first presentation is verified');
    const principal = await first;
    const second = auth.authenticate(bearer(t));
    assert.ok(!(second instanceof Promise), 'the second is served from the cache');
    assert.equal(second, principal);
    assert.ok(Object.isFrozen(principal));
    assert.deepEqual(principal, { issuer: ISSUER, subject: 'alice', tenant: 'acme', scopes: new Set(['read']), audience: [AUDIENCE], expiresAt: principal.expiresAt });
    assert.equal(typeof principal.expiresAt, 'number');
    assert.deepEqual(lookups, [false, true]);
  });

  it('another token of the same subject, or the same token with one byte of its signature changed, is verified in full', async () => {
    const { auth, lookups } = authenticator();
    const t = await token();
    await auth.authenticate(bearer(t));
    const forged = `${t.slice(0, -2)}${t.at(-2) === 'A' ? 'B' : 'A'}${t.at(-1)}`;
    assert.equal(await reason(auth.authenticate(bearer(forged))), 'signature');
    await auth.authenticate(bearer(await token({ expIn: 400 })));
    assert.deepEqual(lookups, [false, false, false]);
  });

  it('a kept token expires with its exp claim: refused once it has passed', async () => {
    const { auth, lookups } = authenticator();
    // exp is in whole seconds (now's second + 5): 3 s on leaves at least a second, whatever the
    // sub-second phase and the time the first check took (at 4 s a slow machine could be past exp).
    const t = await token({ expIn: 5 });
    await auth.authenticate(bearer(t));
    mock.timers.enable({ apis: ['Date'], now: Date.now() + 3_000 });
    assert.ok(!(auth.authenticate(bearer(t)) instanceof Promise), 'still within exp');
    mock.timers.setTime(Date.now() + 3_000);
    assert.equal(await reason(auth.authenticate(bearer(t))), 'expired');
    assert.deepEqual(lookups, [false, true, false]);
  });

  it('a token is verified again once maxAgeMs has passed since its check, whatever its exp', async () => {
    const { auth, lookups } = authenticator({ tokenCache: { maxAgeMs: 1_000 } });
    const t = await token();
    await auth.authenticate(bearer(t));
    mock.timers.enable({ apis: ['Date'], now: Date.now() + 1_500 });
    assert.ok(auth.authenticate(bearer(t)) instanceof Promise);
    assert.deepEqual(lookups, [false, false]);
  });

  it('with a JWKS URL a token is kept at most half of jwksCacheMaxAgeMs (the key set keeps the other half)', async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
    const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k', alg: 'RS256', use: 'sig' }] });
    const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(jwks));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
      const lookups: boolean[] = [];
      const cfg = authConfig({ jwksUrl: url, hmacSecret: undefined, allowHmac: false, algorithms: ['RS256'], jwksCacheMaxAgeMs: 2_000 });
      const auth = new Authenticator(cfg, [AUDIENCE], (hit) => lookups.push(hit));
      const t = await new SignJWT({ tenant: 'acme' }).setProtectedHeader({ alg: 'RS256', kid: 'k' }).setIssuer(ISSUER).setAudience(AUDIENCE).setSubject('bob').setExpirationTime('1h').sign(privateKey);
      await auth.authenticate(bearer(t));
      assert.ok(!(auth.authenticate(bearer(t)) instanceof Promise));
      // Past half the key set's age (1 s) but well within maxAgeMs (60 s) and the token's exp.
      mock.timers.enable({ apis: ['Date'], now: Date.now() + 1_200 });
      const again = auth.authenticate(bearer(t));
      assert.ok(again instanceof Promise, 'verified again');
      assert.equal((await again).subject, 'bob');
      assert.deepEqual(lookups, [false, true, false]);
    } finally {
      server.close();
    }
  });

  it('maxEntries bounds the cache (the oldest goes first); 0 keeps nothing', async () => {
    const { auth, lookups } = authenticator({ tokenCache: { maxEntries: 2 } });
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((sub) => token({ sub })));
    for (const t of [a!, b!, c!]) await auth.authenticate(bearer(t));
    assert.ok(auth.authenticate(bearer(a!)) instanceof Promise, 'the oldest was evicted');
    assert.ok(!(auth.authenticate(bearer(c!)) instanceof Promise));
    assert.deepEqual(lookups, [false, false, false, false, true]);

    const none = authenticator({ tokenCache: { maxEntries: 0 } });
    await none.auth.authenticate(bearer(a!));
    assert.ok(none.auth.authenticate(bearer(a!)) instanceof Promise);
  });

  it('a heavy entry (a token over 16 KiB, or thousands of scopes) is verified every time (never kept)', async () => {
    const { auth, lookups } = authenticator();
    const sign = (claims: Record<string, unknown>, sub: string) =>
      new SignJWT({ tenant: 'acme', ...claims }).setProtectedHeader({ alg: 'HS256' }).setIssuer(ISSUER).setAudience(AUDIENCE).setSubject(sub).setExpirationTime('5m').sign(new TextEncoder().encode(SECRET));
    const long = await sign({ pad: 'x'.repeat(14_000) }, 'carol');
    const scoped = await sign({ scope: Array.from({ length: 300 }, (_, i) => `scope-${i}`).join(' ') }, 'dan');
    for (const t of [long, scoped]) {
      await auth.authenticate(bearer(t));
      assert.ok(auth.authenticate(bearer(t)) instanceof Promise, 'verified again');
    }
    assert.deepEqual(lookups, [false, false, false, false]);
  });

  it('maxAgeMs holds on the monotonic clock too: a wall clock stepped back does not keep a token longer', async () => {
    const { auth, lookups } = authenticator({ tokenCache: { maxAgeMs: 200 } });
    const t = await token();
    await auth.authenticate(bearer(t));
    mock.timers.enable({ apis: ['Date'], now: Date.now() - 3_600_000 });
    await new Promise((r) => setTimeout(r, 250));
    assert.ok(auth.authenticate(bearer(t)) instanceof Promise, 'verified again once 200 ms have really passed');
    assert.deepEqual(lookups, [false, false]);
  });

  it('takes a token after more than one space (RFC 6750 §2.1: "Bearer" 1*SP b64token; found by a review)', async () => {
    const { auth } = authenticator();
    const t = await token();
    assert.equal((await auth.authenticate({ authorization: [`Bearer  ${t}`], tokenInQuery: false })).subject, (await auth.authenticate(bearer(t))).subject);
  });

  it('a malformed header or a token in the query is refused before any lookup', async () => {
    const { auth, lookups } = authenticator();
    assert.throws(() => auth.authenticate({ authorization: ['Bearer a b'], tokenInQuery: false }), (e: unknown) => e instanceof AuthError && e.reason === 'malformed_header');
    assert.throws(() => auth.authenticate({ authorization: ['Basic x'], tokenInQuery: false }), (e: unknown) => e instanceof AuthError && e.status === 401 && e.reason === 'other_scheme');
    assert.throws(() => auth.authenticate({ authorization: [], tokenInQuery: true }), (e: unknown) => e instanceof AuthError && e.reason === 'token_in_query');
    assert.deepEqual(lookups, []);
  });
});
