// The Authenticator on its own (no gateway): a config of auth.mode jwt for tenant acme, and what a unit
// test of a token's verification reads (the request's credentials, the AuthError it is refused with).
import assert from 'node:assert/strict';
import { AuthError } from '../../src/auth/auth-error.js';
import { Authenticator } from '../../src/auth/authenticator.js';
import type { Principal } from '../../src/auth/principal.js';
import { parseConfig } from '../../src/config/index.js';
import { ISSUER, PUBLIC_URL } from './tokens.js';

/** A request's credentials: the token in an Authorization header. */
export const bearer = (t: string) => ({ authorization: [`Bearer ${t}`], tokenInQuery: false });

/** The AuthError a token was refused with (a test failure if it was accepted). */
export async function authRefusal(p: Principal | Promise<Principal>): Promise<AuthError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof AuthError, String(err));
    return err;
  }
  assert.fail('the token was accepted');
}

/**
 * An Authenticator of issuer ISSUER for PUBLIC_URL, no token cache, the key set not fetched again within a
 * minute; `auth` adds the keys (auth.keys relative to `dir`, auth.jwksUrl) and anything else.
 */
export function jwtAuthenticator(dir: string, auth: Record<string, unknown>): Authenticator {
  const config = parseConfig(
    {
      server: { host: '127.0.0.1' },
      auth: { mode: 'jwt', issuer: ISSUER, jwksCooldownMs: 60_000, tokenCache: { maxEntries: 0 }, ...auth },
      tenants: [{ name: 'acme', endpoints: ['/mcp'] }],
      upstreams: [{ name: 'u', transport: 'stdio', command: 'node', sandbox: 'none' }],
      endpoints: [{ path: '/mcp', upstreams: ['u'] }],
    },
    'test',
    {},
    dir,
  );
  return new Authenticator(config.auth, [PUBLIC_URL]);
}
