// Tenants sharing a per-session upstream (issue #13.3): real gateway, real tokens for two tenants, real
// per-session child processes of the conformance fixture. Tenant "a" reaches it on /mcp, tenant "b" on
// /other. One tenant holding or queueing for every instance must not lock the other one out.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { ISSUER, JwksServer, PUBLIC_URL, deleteSession, initializeBody, makeKey, mcpRequest, openSession, signToken, type RpcReply, type TestKey } from '../helpers/tokens.js';
import { until as waitUntil } from '../helpers/wait.js';

interface Setup {
  gw: RunningGateway;
  tokenA: string;
  tokenB: string;
  waiting(): number;
}

async function setUp(key: TestKey, jwks: JwksServer, pool: Record<string, unknown>): Promise<Setup> {
  const gw = await startGateway({
    server: { publicUrl: PUBLIC_URL },
    auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: jwks.url, audience: [PUBLIC_URL] },
    tenants: [
      { name: 'a', endpoints: ['/mcp'] },
      { name: 'b', endpoints: ['/other'] },
    ],
    upstreams: [{ name: 'fixture', transport: 'stdio', ...FIXTURE, sharing: 'per-session', pool: { warm: 0, ...pool } }],
    endpoints: [
      { path: '/mcp', upstreams: ['fixture'] },
      { path: '/other', upstreams: ['fixture'] },
    ],
  });
  const pools = gw.app.gateway.pools;
  return {
    gw,
    tokenA: await signToken(key, { tenant: 'a', sub: 'a-user' }),
    tokenB: await signToken(key, { tenant: 'b', sub: 'b-user' }),
    waiting: () => (pools.get('fixture') as unknown as { waiting?: number }).waiting ?? -1,
  };
}

/** An initialize that is still running, and whether it has been answered. */
function initialize(s: Setup, token: string, path: string): { reply: Promise<RpcReply>; settled: () => boolean } {
  let done = false;
  const reply = mcpRequest(s.gw, initializeBody(), { token, path }).finally(() => void (done = true));
  return { reply, settled: () => done };
}

const until = (cond: () => boolean, what: string): Promise<void> => waitUntil(what, cond, 10_000);

function assertServed(r: RpcReply, who: string): string {
  assert.equal(r.status, 200, `${who}: HTTP ${r.status} ${r.text}`);
  assert.ok(r.json?.result, `${who} initialized: ${r.text}`);
  return r.headers.get('mcp-session-id')!;
}

/**
 * Tenant a opens two sessions, then asks for a third before tenant b asks for its first (without a
 * share a would take the last instance): b is served, a's third fails at its share of 2. Returns a's
 * two sessions and b's.
 */
async function aAtItsShareBServed(s: Setup): Promise<[string, string, string]> {
  const a1 = await openSession(s.gw, s.tokenA);
  const a2 = await openSession(s.gw, s.tokenA);
  const a3 = initialize(s, s.tokenA, '/mcp');
  await until(() => s.waiting() === 1 || a3.settled(), "a's third session queued or answered");
  const b1 = assertServed(await mcpRequest(s.gw, initializeBody(), { token: s.tokenB, path: '/other' }), "b's session");
  const refused = await a3.reply;
  assert.equal(refused.json?.error?.data?.code, 'SWB_POOL_EXHAUSTED', `a's third session: ${refused.text}`);
  assert.match(refused.json?.error?.message, /tenant "a" holds its share of 2/);
  return [a1, a2, b1];
}

describe('tenants sharing a per-session upstream', () => {
  let key: TestKey;
  let jwks: JwksServer;
  before(async () => {
    key = await makeKey('pool-key', 'ES256');
    jwks = await JwksServer.start([key.publicJwk]);
  });
  after(() => jwks?.close());

  describe('pool {max: 3, queue: 2, perTenantMax: 2}', () => {
    let s: Setup;
    before(async () => {
      s = await setUp(key, jwks, { max: 3, queue: 2, perTenantMax: 2, acquireTimeoutMs: 1500 });
    });
    after(() => s?.gw.close());

    it('tenant a cannot hold every instance: its third session waits and fails while tenant b is served', async () => {
      const [a1, a2, b1] = await aAtItsShareBServed(s);
      // Once one of a's sessions ends, a may open another.
      assert.equal(await deleteSession(s.gw, s.tokenA, a1), 200);
      const a4 = assertServed(await mcpRequest(s.gw, initializeBody(), { token: s.tokenA }), "a's next session");
      for (const [t, sid, path] of [[s.tokenA, a2, '/mcp'], [s.tokenA, a4, '/mcp'], [s.tokenB, b1, '/other']] as const) await deleteSession(s.gw, t, sid, path);
    });
  });

  describe('pool {max: 3, queue: 2}, no share configured (the review\'s setting): two tenants reach it, so each gets max - 1', () => {
    let s: Setup;
    before(async () => {
      s = await setUp(key, jwks, { max: 3, queue: 2, acquireTimeoutMs: 1500 });
    });
    after(() => s?.gw.close());

    it('tenant a opening sessions first still leaves tenant b an instance', async () => {
      const [a1, a2, b1] = await aAtItsShareBServed(s);
      for (const [t, sid, path] of [[s.tokenA, a1, '/mcp'], [s.tokenA, a2, '/mcp'], [s.tokenB, b1, '/other']] as const) await deleteSession(s.gw, t, sid, path);
    });
  });

  describe('pool {max: 2, queue: 2, perTenantMax: 2} (no effective share): fair queueing', () => {
    let s: Setup;
    before(async () => {
      s = await setUp(key, jwks, { max: 2, queue: 2, perTenantMax: 2, acquireTimeoutMs: 8000 });
    });
    after(() => s?.gw.close());

    it('a freed instance goes to the waiting tenant that holds none, not to the tenant that queued first', async () => {
      const a1 = await openSession(s.gw, s.tokenA);
      const a2 = await openSession(s.gw, s.tokenA);
      const a3 = initialize(s, s.tokenA, '/mcp');
      await until(() => s.waiting() === 1, "a's third session queued");
      const b1 = initialize(s, s.tokenB, '/other');
      await until(() => s.waiting() === 2, "b's session queued behind it");
      assert.equal(await deleteSession(s.gw, s.tokenA, a1), 200);
      const bSid = assertServed(await b1.reply, "b's session");
      assert.equal(a3.settled(), false, "a's third session still waits");
      assert.equal(s.waiting(), 1);
      assert.equal(await deleteSession(s.gw, s.tokenA, a2), 200);
      const a3Sid = assertServed(await a3.reply, "a's third session");
      await deleteSession(s.gw, s.tokenA, a3Sid);
      await deleteSession(s.gw, s.tokenB, bSid, '/other');
    });
  });
});
