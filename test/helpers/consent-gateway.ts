import type { ConfigInput } from '../../src/config/schema.js';
import { startGateway, type RunningGateway } from './gateway.js';
import { ISSUER, JwksServer, makeKey, signToken } from './tokens.js';

/** One user-oauth upstream of a consent gateway, served alone at its own endpoint path. */
export interface ConsentUpstream {
  name: string;
  path: string;
  url: string;
  authorizationServer: string;
  callback?: 'own' | 'shared';
}

export interface ConsentGateway {
  gw: RunningGateway;
  /** alice's bearer token for the gateway's jwt front door. */
  token: string;
  /** Closes the gateway, then the JWKS server. */
  close(): Promise<void>;
}

/**
 * Builds what the user-consent tests share: a JWKS server, alice's signed token from it, and a gateway at
 * https://switchboard.test with that jwt front door, the acme tenant, a vault key, and one per-user
 * user-oauth upstream (client switchboard) per entry, each on its own endpoint. `extra` adds config (a store);
 * `logLines` keeps the gateway's log lines.
 */
export async function startConsentGateway(upstreams: ConsentUpstream[], extra: Pick<ConfigInput, 'store'> = {}, logLines?: string[]): Promise<ConsentGateway> {
  const key = await makeKey('k1');
  const jwks = await JwksServer.start([key.publicJwk]);
  const token = await signToken(key, { sub: 'alice', expIn: 600 });
  const gw = await startGateway({
    server: { host: '127.0.0.1', port: 0, publicUrl: 'https://switchboard.test' },
    auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: jwks.url },
    tenants: [{ name: 'acme', endpoints: ['*'] }],
    vault: { key: Buffer.alloc(32, 9).toString('base64') },
    ...extra,
    upstreams: upstreams.map((u) => ({
      name: u.name,
      transport: 'streamable-http' as const,
      url: u.url,
      sharing: 'per-user' as const,
      auth: { type: 'user-oauth' as const, clientId: 'switchboard', authorizationServer: u.authorizationServer, ...(u.callback ? { callback: u.callback } : {}) },
    })),
    endpoints: upstreams.map((u) => ({ path: u.path, upstreams: [u.name] })),
  }, { logLines });
  return { gw, token, close: async () => { await gw.close(); await jwks.close(); } };
}
