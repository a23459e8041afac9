// A user-oauth upstream's discovery names an authorization server (RFC 9728) and that server its endpoints
// (RFC 8414). A link-local IP literal there is refused (user-oauth-discovery.test.ts), but a host *name* that
// resolves to one (169.254.169.254: the cloud metadata service; fe80::/10) was connected to: the check read
// the URL only. Now the gateway's connections to authorization servers (authServerAgent) refuse, at connection
// time, a discovered name resolving to a link-local address. The resolver is injected; real HTTP on a
// loopback port serves the upstream's and the loopback server's metadata.
import assert from 'node:assert/strict';
import { lookup as dnsLookup } from 'node:dns';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Agent } from 'undici';
import { parseConfig } from '../../../src/config/load.js';
import type { UpstreamConfig } from '../../../src/config/schema.js';
import type { GatewayError } from '../../../src/errors.js';
import { authServerAgent } from '../../../src/upstream/auth-server-agent.js';
import { UserOAuthClient, type UserOAuthSettings } from '../../../src/upstream/user-oauth-client.js';

/** Names a test gives an address; any other name resolves as usual. */
const NAMES: Record<string, string> = { 'as.evil.test': '169.254.169.254', 'token.evil.test': 'fe80::1', 'as.localhost': '127.0.0.1' };
const resolved: string[] = [];
const resolver = ((host: string, opts: { all?: boolean }, cb: (...a: unknown[]) => void) => {
  const address = NAMES[host];
  if (address === undefined) return dnsLookup(host, opts as never, cb as never);
  resolved.push(host);
  const family = address.includes(':') ? 6 : 4;
  return opts?.all ? cb(null, [{ address, family }]) : cb(null, address, family);
}) as unknown as LookupFunction;

describe('authorization servers found by discovery at a host name that resolves to a link-local address', () => {
  let server: Server;
  let origin: string;
  let port: number;
  const agents: Agent[] = [];
  /** What the upstream names, what its server lists. */
  let names = '';
  let tokenEndpoint = '';
  const seen: string[] = [];

  before(async () => {
    server = createServer((req, res) => {
      seen.push(`${req.headers.host}${req.url}`);
      const self = `http://${req.headers.host}`;
      const docs: Record<string, object> = {
        '/.well-known/oauth-protected-resource/mcp': { resource: `${origin}/mcp`, authorization_servers: [names] },
        '/.well-known/oauth-authorization-server': { issuer: self, authorization_endpoint: `${self}/authorize`, token_endpoint: tokenEndpoint || `${self}/token` },
      };
      const doc = docs[req.url ?? ''];
      if (!doc) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    origin = `http://127.0.0.1:${port}`;
  });

  after(async () => {
    await Promise.all(agents.map((a) => a.close()));
    await new Promise((resolve) => server.close(resolve));
  });

  const client = (auth: Record<string, unknown> = {}) => {
    const config = parseConfig({
      server: { host: '127.0.0.1', publicUrl: 'https://gw.test' },
      auth: { mode: 'jwt', issuer: 'https://issuer.test', hmacSecret: 'x'.repeat(32), allowHmac: true },
      vault: { key: Buffer.alloc(32, 7).toString('base64') },
      tenants: [{ name: 'acme', endpoints: ['/mcp'] }],
      upstreams: [{ name: 'tickets', transport: 'streamable-http', url: `${origin}/mcp`, sharing: 'per-user', http: { connectTimeoutMs: 2000 }, auth: { type: 'user-oauth', clientId: 'gw', clientSecret: 'gateway-secret-1234', ...auth } }],
      endpoints: [{ path: '/mcp', upstreams: ['tickets'] }],
    }, 'test', {});
    const u = config.upstreams[0] as UpstreamConfig & { auth: UserOAuthSettings };
    const agent = authServerAgent(u, resolver);
    agents.push(agent);
    return new UserOAuthClient({ name: 'tickets', url: `${origin}/mcp` }, u.auth, agent, 5000);
  };
  const failure = (p: Promise<unknown>) => p.then(() => assert.fail('accepted'), (e: unknown) => e as GatewayError);

  it('an authorization server named by the upstream, its name resolving to 169.254.169.254: refused, named, never connected', async () => {
    names = 'https://as.evil.test';
    const err = await failure(client().discover());
    assert.equal(err.code, 'SWB_UPSTREAM_UNAVAILABLE');
    assert.match(err.message, /as\.evil\.test.*link-local address 169\.254\.169\.254/);
    assert.ok(resolved.includes('as.evil.test'));
  });

  it('a token endpoint the server lists, its name resolving to fe80::1: the refresh is refused before the secret goes anywhere', async () => {
    names = `http://as.localhost:${port}`;
    tokenEndpoint = 'https://token.evil.test/token';
    const c = client();
    await c.discover();
    const err = await failure(c.refresh('rt-0123456789'));
    assert.equal(err.code, 'SWB_UPSTREAM_UNAVAILABLE');
    assert.match(err.message, /token\.evil\.test.*link-local address fe80::1/);
    tokenEndpoint = '';
  });

  it('a discovered name resolving to loopback is used; so is a name the operator wrote, wherever it resolves', async () => {
    names = `http://as.localhost:${port}`;
    seen.length = 0;
    await client().discover();
    assert.ok(seen.includes(`as.localhost:${port}/.well-known/oauth-authorization-server`), seen.join(', '));
  });
});
