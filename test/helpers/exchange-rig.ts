import { startExchangeServer, type ExchangeServer } from './exchange-server.js';
import { startGateway, type RunningGateway } from './gateway.js';
import { startIdentityUpstream, type IdentityUpstream } from './identity-upstream.js';
import { ISSUER, JwksServer, makeKey, PUBLIC_URL, type TestKey } from './tokens.js';

export const CLIENT_ID = 'switchboard';
export const CLIENT_SECRET = 'gateway-client-secret-never-shown';
export const AUDIENCE = 'https://tickets.test';

export interface ExchangeRig {
  key: TestKey;
  jwks: JwksServer;
  as: ExchangeServer;
  upstream: IdentityUpstream;
  gw: RunningGateway;
  close(): Promise<void>;
}

export interface ExchangeRigOptions {
  /** The authorization server's exchanged tokens' lifetime (default 300 s). */
  ttlSec?: number;
  /** The gateway's client secret the authorization server expects (default CLIENT_SECRET). */
  clientSecret?: string;
  /** Added to (or replacing) the upstream's token-exchange `auth` (a clientSecretFile, a scope). */
  exchange?: Record<string, unknown>;
  /** Added to the upstream "tickets" config (its pool, restart, health check). */
  upstream?: Record<string, unknown>;
  /** Added to the gateway's `auth` (a clock tolerance). */
  auth?: Record<string, unknown>;
  /** Added to the gateway's config (an admin API). */
  config?: Record<string, unknown>;
  logLines?: string[];
}

/**
 * What every token-exchange suite stands on: a key the client tokens are signed with and its JWKS, an
 * authorization server that exchanges them (RFC 8693) for the upstream's audience, an identity upstream that
 * reports the exchanged token it was called with, and a gateway whose per-user upstream "tickets" has a
 * token-exchange credential, on /mcp for tenant acme.
 */
export async function startExchangeRig(o: ExchangeRigOptions = {}): Promise<ExchangeRig> {
  const key = await makeKey('k1');
  const jwks = await JwksServer.start([key.publicJwk]);
  const as = await startExchangeServer({ clientId: CLIENT_ID, clientSecret: o.clientSecret ?? CLIENT_SECRET, subjectIssuer: ISSUER, subjectKeys: [key.publicJwk], subjectAudience: PUBLIC_URL, ttlSec: o.ttlSec });
  const upstream = await startIdentityUpstream({ issuer: as.issuer, audience: AUDIENCE, actor: CLIENT_ID, keys: as.keys });
  const close = async (gw?: RunningGateway) => {
    await gw?.close();
    await upstream.close();
    await as.close();
    await jwks.close();
  };
  try {
    // A secret file given stands instead of the secret itself (the config takes one of the two).
    const secret = o.exchange?.clientSecretFile === undefined ? { clientSecret: CLIENT_SECRET } : {};
    const auth = { type: 'token-exchange', tokenEndpoint: as.tokenEndpoint, clientId: CLIENT_ID, ...secret, audience: AUDIENCE, ...o.exchange };
    const gw = await startGateway(
      {
        server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
        auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: jwks.url, ...o.auth },
        tenants: [{ name: 'acme', endpoints: ['*'] }],
        upstreams: [{ name: 'tickets', transport: 'streamable-http', url: upstream.url, sharing: 'per-user', ...o.upstream, auth } as never],
        endpoints: [{ path: '/mcp', upstreams: ['tickets'] }],
        ...o.config,
      },
      { logLines: o.logLines },
    );
    return { key, jwks, as, upstream, gw, close: () => close(gw) };
  } catch (e) {
    await close();
    throw e;
  }
}
