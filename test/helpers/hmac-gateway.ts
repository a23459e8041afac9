import { FIXTURE, startGateway, type RunningGateway } from './gateway.js';
import { ISSUER, PUBLIC_URL } from './tokens.js';

/**
 * A gateway whose tokens are HS256 JWTs signed with `secret` (signHmac), no clock tolerance (a token's expiry
 * is exactly its exp), tenant acme on /mcp in front of one shared conformance stdio server: for the suites on
 * what a token's expiry ends.
 */
export function startHmacGateway(secret: string): Promise<RunningGateway> {
  return startGateway({
    pinning: { mode: 'off' },
    server: { publicUrl: PUBLIC_URL },
    auth: { mode: 'jwt', issuer: ISSUER, audience: [PUBLIC_URL], hmacSecret: secret, allowHmac: true, algorithms: ['HS256'], clockToleranceSec: 0 },
    tenants: [{ name: 'acme', endpoints: ['/mcp'] }],
    upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared', pool: { size: 1 } }],
    endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
  });
}
