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

/** The parts of a rig but the gateway: for suites that run a gateway of their own (file-configured, reloaded). */
export interface ExchangeParts {
  key: TestKey;
  jwks: JwksServer;
  as: ExchangeServer;
  upstream: IdentityUpstream;
  /** The per-user upstream "tickets" of the gateway's config, with its token-exchange credential. */
  tickets(extra?: Record<string, unknown>): Record<string, unknown>;
  close(): Promise<void>;
}

/**
 * A key the client tokens are signed with and its JWKS, an authorization server that exchanges them (RFC 8693)
 * for the upstream's audience, and an identity upstream that reports the exchanged token it was called with.
 */
export async function startExchangeParts(o: Pick<ExchangeRigOptions, 'ttlSec' | 'clientSecret' | 'exchange'> = {}): Promise<ExchangeParts> {
  const key = await makeKey('k1');
  const jwks = await JwksServer.start([key.publicJwk]);
  const as = await startExchangeServer({ clientId: CLIENT_ID, clientSecret: o.clientSecret ?? CLIENT_SECRET, subjectIssuer: ISSUER, subjectKeys: [key.publicJwk], subjectAudience: PUBLIC_URL, ttlSec: o.ttlSec });
  const upstream = await startIdentityUpstream({ issuer: as.issuer, audience: AUDIENCE, actor: CLIENT_ID, keys: as.keys });
  // A secret file given stands instead of the secret itself (the config takes one of the two).
  const secret = o.exchange?.clientSecretFile === undefined ? { clientSecret: CLIENT_SECRET } : {};
  const auth = { type: 'token-exchange', tokenEndpoint: as.tokenEndpoint, clientId: CLIENT_ID, ...secret, audience: AUDIENCE, ...o.exchange };
  return {
    key,
    jwks,
    as,
    upstream,
    tickets: (extra = {}) => ({ name: 'tickets', transport: 'streamable-http', url: upstream.url, sharing: 'per-user', ...extra, auth }),
    close: async () => {
      await upstream.close();
      await as.close();
      await jwks.close();
    },
  };
}

/**
 * What every token-exchange suite stands on: the parts (startExchangeParts) and a gateway whose per-user
 * upstream "tickets" has a token-exchange credential, on /mcp for tenant acme.
 */
export async function startExchangeRig(o: ExchangeRigOptions = {}): Promise<ExchangeRig> {
  const parts = await startExchangeParts(o);
  try {
    const gw = await startGateway(
      {
        server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
        auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: parts.jwks.url, ...o.auth },
        tenants: [{ name: 'acme', endpoints: ['*'] }],
        upstreams: [parts.tickets(o.upstream) as never],
        endpoints: [{ path: '/mcp', upstreams: ['tickets'] }],
        ...o.config,
      },
      { logLines: o.logLines },
    );
    const { key, jwks, as, upstream } = parts;
    return { key, jwks, as, upstream, gw, close: async () => (await gw.close(), await parts.close()) };
  } catch (e) {
    await parts.close();
    throw e;
  }
}

/**
 * The parts (startExchangeParts) and a gateway whose stdio upstream "tickets" (`script`, per-session, on
 * /tickets) is started with an exchange of its session's user's token in TICKETS_TOKEN.
 */
export async function startStdioExchangeRig(script: string, ttlSec: number): Promise<{ key: TestKey; gw: RunningGateway; close(): Promise<void> }> {
  const parts = await startExchangeParts({ ttlSec });
  const { auth } = parts.tickets() as { auth: Record<string, unknown> };
  try {
    const gw = await startGateway({
      server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
      auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: parts.jwks.url },
      tenants: [{ name: 'acme', endpoints: ['*'] }],
      upstreams: [
        { name: 'tickets', transport: 'stdio', command: process.execPath, args: [script], sharing: 'per-session', sandbox: 'none', healthCheck: { intervalMs: 0 }, tokenEnv: 'TICKETS_TOKEN', auth: auth as never },
      ],
      endpoints: [{ path: '/tickets', upstreams: ['tickets'] }],
    });
    return { key: parts.key, gw, close: async () => (await gw.close(), await parts.close()) };
  } catch (e) {
    await parts.close();
    throw e;
  }
}
