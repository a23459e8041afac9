// Per-user upstream credentials by token exchange (RFC 8693), end to end: the official SDK client →
// gateway (JWT auth) → a real authorization server (oauth2-mock-server with the exchange grant) and an
// SDK upstream that verifies every bearer's subject, audience and actor. Users reach the upstream as
// themselves and never as each other; a client's own token never reaches the upstream or a log line.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startExchangeServer, type ExchangeServer } from '../helpers/exchange-server.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startIdentityUpstream, type IdentityUpstream } from '../helpers/identity-upstream.js';
import { connectWithToken, ISSUER, JwksServer, makeKey, mcpRequest, openSession, PUBLIC_URL, signToken, type TestKey, type TokenClient } from '../helpers/tokens.js';

const CLIENT_ID = 'switchboard';
const CLIENT_SECRET = 'gateway-client-secret-never-shown';
const AUDIENCE = 'https://tickets.test';
const CALLS = 1000;
const IN_FLIGHT = 20;

describe('token exchange: each user reaches the upstream as themselves', () => {
  let key: TestKey;
  let jwks: JwksServer;
  let as: ExchangeServer;
  let upstream: IdentityUpstream;
  let gw: RunningGateway;
  const logLines: string[] = [];
  const tokens: Record<string, string> = {};
  const clients: TokenClient[] = [];

  before(async () => {
    key = await makeKey('k1');
    jwks = await JwksServer.start([key.publicJwk]);
    as = await startExchangeServer({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, subjectIssuer: ISSUER, subjectKeys: [key.publicJwk], subjectAudience: PUBLIC_URL });
    upstream = await startIdentityUpstream({ issuer: as.issuer, audience: AUDIENCE, actor: CLIENT_ID, keys: as.keys });
    for (const sub of ['alice', 'bob', 'mallory']) tokens[sub] = await signToken(key, { sub, expIn: 600 });
    gw = await startGateway(
      {
        server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
        auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: jwks.url },
        tenants: [{ name: 'acme', endpoints: ['*'] }],
        upstreams: [
          {
            name: 'tickets',
            transport: 'streamable-http',
            url: upstream.url,
            sharing: 'per-user',
            auth: { type: 'token-exchange', tokenEndpoint: as.tokenEndpoint, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, audience: AUDIENCE, scope: 'tickets' },
          },
        ],
        endpoints: [{ path: '/mcp', upstreams: ['tickets'] }],
      },
      { logLines },
    );
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await gw?.close();
    await upstream?.close();
    await as?.close();
    await jwks?.close();
  });

  const connect = async (sub: string) => {
    const c = await connectWithToken(gw, 'streamable-http', tokens[sub]!, { name: sub });
    clients.push(c);
    return c;
  };

  it(`${CALLS} interleaved calls of two users: every one reaches the upstream as its own user, 0 crossed`, async () => {
    const [a, b] = [await connect('alice'), await connect('bob')];
    const { tools } = await a.client.listTools();
    const whoami = tools.find((t) => t.name.endsWith('whoami'))!.name;
    const wrong: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < CALLS) {
        const i = next++;
        const [sub, c] = i % 2 === 0 ? (['alice', a] as const) : (['bob', b] as const);
        const r = await c.client.callTool({ name: whoami, arguments: { claimed: sub } });
        const seen = (r.content as Array<{ text: string }>)[0]!.text;
        if (seen !== sub) wrong.push(`${sub} was seen as ${seen}`);
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    assert.deepEqual(wrong, []);
    assert.equal(upstream.crossed, 0, 'no call reached the upstream with another user\'s identity');
    assert.equal(upstream.calls.get('alice'), CALLS / 2);
    assert.equal(upstream.calls.get('bob'), CALLS / 2);
    assert.deepEqual(upstream.rejected, [], 'every bearer verified (audience, issuer, actor)');
    // Cached per user and upstream: one exchange each, not one per call.
    assert.equal(as.exchanges.get('alice'), 1);
    assert.equal(as.exchanges.get('bob'), 1);
    // Each user its own upstream session.
    assert.equal(upstream.sessions.get('alice'), 1);
    assert.equal(upstream.sessions.get('bob'), 1);
  });

  it('a client\'s own token never reaches the upstream', () => {
    for (const t of Object.values(tokens)) assert.ok(!upstream.bearers.has(t), 'a client token was sent upstream');
    assert.ok(upstream.bearers.size >= 2);
  });

  it('a refused exchange answers the call with a clear JSON-RPC error, and the upstream never hears of the user', async () => {
    as.refuse.add('mallory');
    const sid = await openSession(gw, tokens.mallory!);
    const r = await mcpRequest(gw, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: { claimed: 'mallory' } } }, { token: tokens.mallory!, sid });
    assert.equal(r.status, 200);
    const err = r.json?.error;
    assert.ok(err, `an error: ${r.text}`);
    assert.equal(err.data?.code, 'SWB_UPSTREAM_CREDENTIAL_REFUSED', r.text);
    assert.equal(err.data?.reason, 'invalid_grant');
    assert.match(err.message, /refused to exchange your token for upstream "tickets"/);
    assert.equal(upstream.calls.get('mallory'), undefined);
    assert.equal(upstream.sessions.get('mallory'), undefined);
  });

  it('no token appears in a log line or in /metrics', async () => {
    const secrets = [...Object.values(tokens), ...upstream.bearers, CLIENT_SECRET];
    const metrics = await (await fetch(gw.app.metricsUrl!)).text();
    assert.ok(logLines.length > 0);
    for (const s of secrets) {
      assert.ok(!logLines.some((l) => l.includes(s)), 'a token in a log line');
      assert.ok(!metrics.includes(s), 'a token in /metrics');
    }
  });
});
