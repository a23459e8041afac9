// Token exchange on two replicas sharing one Redis: each user's session is opened on one replica and its
// calls are spread over both, so each replica exchanges the user's token with the token the user presented
// to it and holds that user's upstream connection of its own. Users reach the upstream as themselves and
// never as each other; no token appears in a log line, /metrics or an admin API answer of either replica.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startExchangeServer, type ExchangeServer } from '../helpers/exchange-server.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startIdentityUpstream, type IdentityUpstream } from '../helpers/identity-upstream.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { ISSUER, JwksServer, makeKey, mcpRequest, openSession, PUBLIC_URL, signToken, type TestKey } from '../helpers/tokens.js';

const CLIENT_ID = 'switchboard';
const CLIENT_SECRET = 'replica-exchange-secret-never-shown';
const AUDIENCE = 'https://tickets.test';
const ADMIN_TOKEN = 'admin-token-for-exchange-replicas-0123456789';
const CALLS = 400;
const IN_FLIGHT = 16;

describe('token exchange on two replicas: each user reaches the upstream as themselves from either', () => {
  let key: TestKey;
  let jwks: JwksServer;
  let as: ExchangeServer;
  let upstream: IdentityUpstream;
  let redis: TestRedis;
  const gateways: RunningGateway[] = [];
  const logLines: string[] = [];
  const adminAnswers: string[] = [];
  const tokens: Record<string, string> = {};

  before(async () => {
    key = await makeKey('k1');
    jwks = await JwksServer.start([key.publicJwk]);
    as = await startExchangeServer({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, subjectIssuer: ISSUER, subjectKeys: [key.publicJwk], subjectAudience: PUBLIC_URL });
    upstream = await startIdentityUpstream({ issuer: as.issuer, audience: AUDIENCE, actor: CLIENT_ID, keys: as.keys });
    redis = await startRedis();
    for (const sub of ['alice', 'bob']) tokens[sub] = await signToken(key, { sub, expIn: 600 });
    for (let i = 0; i < 2; i++) {
      gateways.push(
        await startGateway(
          {
            server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
            auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: jwks.url },
            tenants: [{ name: 'acme', endpoints: ['*'] }],
            store: { redis: { url: redis.url, keyPrefix: 'tx:' } },
            admin: { enabled: true, port: 0, token: ADMIN_TOKEN },
            upstreams: [
              {
                name: 'tickets',
                transport: 'streamable-http',
                url: upstream.url,
                sharing: 'per-user',
                auth: { type: 'token-exchange', tokenEndpoint: as.tokenEndpoint, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, audience: AUDIENCE },
              },
            ],
            endpoints: [{ path: '/mcp', upstreams: ['tickets'] }],
          },
          { logLines },
        ),
      );
    }
  });

  after(async () => {
    for (const g of gateways) await g.close().catch(() => {});
    await redis?.stop();
    await upstream?.close();
    await as?.close();
    await jwks?.close();
  });

  const admin = async (gw: RunningGateway, path: string) => {
    const res = await fetch(new URL(path, gw.app.adminUrl), { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const body = await res.text();
    adminAnswers.push(body);
    assert.equal(res.status, 200, body);
    return JSON.parse(body) as { items: Array<Record<string, unknown>> };
  };

  it(`${CALLS} interleaved calls of two users over both replicas (sessions opened on different ones): 0 crossed`, async () => {
    // Alice's session belongs to replica 0, Bob's to replica 1; every call goes to either.
    const sids = { alice: await openSession(gateways[0]!, tokens.alice!), bob: await openSession(gateways[1]!, tokens.bob!) };
    const wrong: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < CALLS) {
        const i = next++;
        const sub = i % 2 === 0 ? 'alice' : 'bob';
        const gw = gateways[Math.floor(i / 2) % 2]!;
        const r = await mcpRequest(gw, { jsonrpc: '2.0', id: i + 10, method: 'tools/call', params: { name: 'whoami', arguments: { claimed: sub } } }, { token: tokens[sub]!, sid: sids[sub] });
        const seen = (r.json?.result?.content as Array<{ text: string }> | undefined)?.[0]?.text;
        if (seen !== sub) wrong.push(`${sub} on replica ${gateways.indexOf(gw)}: ${seen ?? r.text.slice(0, 200)}`);
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    assert.deepEqual(wrong, []);
    assert.equal(upstream.crossed, 0, "no call reached the upstream with another user's identity");
    assert.equal(upstream.calls.get('alice'), CALLS / 2);
    assert.equal(upstream.calls.get('bob'), CALLS / 2);
    assert.deepEqual(upstream.rejected, [], 'every bearer verified (audience, issuer, actor)');
    // Each replica the calls reached exchanged each user's token once, and no more.
    for (const sub of ['alice', 'bob']) {
      const n = as.exchanges.get(sub) ?? 0;
      assert.ok(n >= 1 && n <= 2, `${sub}: ${n} exchanges for two replicas`);
    }
    for (const t of Object.values(tokens)) assert.ok(!upstream.bearers.has(t), "a client's own token was sent upstream");
  });

  it('no token or client secret in a log line, /metrics or an admin API answer of either replica', async () => {
    for (const g of gateways) {
      await admin(g, '/sessions');
      await admin(g, '/upstreams');
      await admin(g, '/config');
    }
    const metrics = await Promise.all(gateways.map(async (g) => (await fetch(g.app.metricsUrl!)).text()));
    const secrets = [...Object.values(tokens), ...upstream.bearers, CLIENT_SECRET];
    assert.ok(upstream.bearers.size >= 2 && logLines.length > 0 && adminAnswers.length === 6);
    for (const s of secrets) {
      assert.ok(!logLines.some((l) => l.includes(s)), 'a secret in a log line');
      assert.ok(!metrics.some((m) => m.includes(s)), 'a secret in /metrics');
      assert.ok(!adminAnswers.some((a) => a.includes(s)), 'a secret in an admin API answer');
    }
  });
});
