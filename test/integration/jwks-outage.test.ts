// The issuer's key set failing to load: no client, with or without a valid token, can make the gateway
// fetch it more than once per jwksCooldownMs (each unauthenticated request was a fetch while it failed),
// and the 503 a client gets never carries the failed fetch's text (which can name the key set's URL with
// its credentials).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { ISSUER, JwksServer, PUBLIC_URL, initializeBody, makeKey, mcpRequest, signToken, type TestKey } from '../helpers/tokens.js';
import { moveClockAhead, restoreClock, until } from '../helpers/wait.js';

function gatewayConfig(jwksUrl: string, jwksCooldownMs: number, extra: Record<string, unknown> = {}) {
  return {
    server: { publicUrl: PUBLIC_URL },
    auth: { mode: 'jwt' as const, issuer: ISSUER, audience: [PUBLIC_URL], jwksUrl, jwksCooldownMs, ...extra },
    tenants: [{ name: 'acme', endpoints: ['/mcp'] }],
    upstreams: [{ name: 'fixture', transport: 'stdio' as const, ...FIXTURE, sharing: 'shared' as const }],
    endpoints: [{ path: '/mcp', upstreams: ['fixture'] }],
  };
}

describe('auth: a key set that fails to load', () => {
  let jwks: JwksServer;
  let key: TestKey;
  let stranger: TestKey;
  /** A gateway for one test, closed whatever the test's outcome. */
  async function withGateway(jwksUrl: string, cooldownMs: number, fn: (gw: RunningGateway) => Promise<void>, extra?: Record<string, unknown>): Promise<void> {
    const gw = await startGateway(gatewayConfig(jwksUrl, cooldownMs, extra));
    try {
      await fn(gw);
    } finally {
      await gw.close();
    }
  }

  before(async () => {
    key = await makeKey('outage');
    stranger = await makeKey('never-published');
    jwks = await JwksServer.start([key.publicJwk]);
  });
  after(async () => {
    await jwks?.close();
  });

  it('is fetched at most once per jwksCooldownMs while it fails, however many requests carry tokens', async () => {
    jwks.failWith = 500;
    await withGateway(jwks.url, 60_000, async (gw) => {
      const before = jwks.fetches;
      // One after another (concurrent ones share one fetch anyway): valid tokens and unknown kids alike.
      for (let i = 0; i < 8; i++) {
        const r = await mcpRequest(gw, initializeBody(), { token: await signToken(i % 2 === 0 ? key : stranger) });
        assert.equal(r.status, 503, `request ${i}: HTTP ${r.status} ${r.text}`);
        assert.match(r.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
      }
      assert.equal(jwks.fetches - before, 1, `${jwks.fetches - before} fetches of a failing key set for 8 requests inside one cooldown`);
    });
  });

  it('is fetched again once the cooldown after a failure has passed, and the token is then accepted', async () => {
    jwks.failWith = 500;
    await withGateway(jwks.url, 1_000, async (gw) => {
      const token = await signToken(key);
      assert.equal((await mcpRequest(gw, initializeBody(), { token })).status, 503);
      jwks.failWith = undefined;
      await until('the token is accepted once the key set is back', async () => (await mcpRequest(gw, initializeBody(), { token })).status === 200, 15_000);
    });
  });

  // A key set whose "keys" array holds something other than keys (found by a review): JSON with a "keys"
  // array passed as a good fetch, jose then refused the set (JWKSInvalid) without counting a fetch, so every
  // request fetched it again (no cooldown at all) and each client was told its token was invalid (401).
  it('a key set whose keys are not all keys is a failed fetch: 503, fetched at most once per cooldown', async () => {
    jwks.failWith = undefined;
    jwks.setKeys([key.publicJwk, null as never]);
    try {
      await withGateway(jwks.url, 60_000, async (gw) => {
        const before = jwks.fetches;
        for (let i = 0; i < 6; i++) {
          const r = await mcpRequest(gw, initializeBody(), { token: await signToken(key) });
          assert.equal(r.status, 503, `request ${i}: HTTP ${r.status} ${r.text}`);
        }
        assert.equal(jwks.fetches - before, 1, `${jwks.fetches - before} fetches of an unusable key set for 6 requests inside one cooldown`);
      });
    } finally {
      jwks.setKeys([key.publicJwk]);
    }
  });

  it("never tells a client what the failed fetch said: a key set URL's credentials stay out of the 503", async () => {
    const u = new URL(jwks.url);
    u.username = 'jwks-reader';
    u.password = 's3cret-pass';
    // The credentials go as Basic (key-set-credentials.test.ts), so the issuer fails the fetch itself.
    jwks.failWith = 500;
    try {
      await withGateway(u.href, 0, async (gw) => {
        const r = await mcpRequest(gw, initializeBody(), { token: await signToken(stranger) });
        assert.equal(r.status, 503, `HTTP ${r.status} ${r.text}`);
        assert.doesNotMatch(r.text, /s3cret-pass|jwks-reader/);
        assert.match(r.json?.error?.message ?? '', /key set cannot be fetched/);
      });
    } finally {
      jwks.failWith = undefined;
    }
  });

  // Found by a review: once the key set in hand was older than jwksCacheMaxAgeMs, jose refetched it for
  // every token, and one failed refetch (a 502 from the issuer's CDN, a timeout) made every token that was
  // not already kept 503 for jwksCooldownMs (the failed fetch is not tried again within it), and all of
  // them for as long as the issuer stayed down: a blip at the issuer every ten minutes was an outage here.
  it('keeps using the keys it holds while refetching them fails, for jwksStaleIfErrorMs past their age', async () => {
    jwks.failWith = undefined;
    // No verified tokens kept (each request's token is checked against the key set) and the default ages.
    await withGateway(jwks.url, 60_000, async (gw) => {
      const ok = await mcpRequest(gw, initializeBody(), { token: await signToken(key) });
      assert.equal(ok.status, 200, `HTTP ${ok.status} ${ok.text}`);
      jwks.failWith = 502;
      try {
        const before = jwks.fetches;
        // Past jwksCacheMaxAgeMs (default 10 min): the next token refetches the set, which fails.
        moveClockAhead(600_000 + 1_000);
        for (let i = 0; i < 4; i++) {
          const r = await mcpRequest(gw, initializeBody(), { token: await signToken(key, { sub: `held-${i}` }) });
          assert.equal(r.status, 200, `request ${i} with the issuer failing: HTTP ${r.status} ${r.text}`);
        }
        assert.equal(jwks.fetches - before, 1, 'one refetch in the cooldown');
        // A key the set in hand does not hold cannot be judged: still 503, not 401.
        const unknown = await mcpRequest(gw, initializeBody(), { token: await signToken(stranger) });
        assert.equal(unknown.status, 503, `unknown kid: HTTP ${unknown.status} ${unknown.text}`);
        // Past jwksStaleIfErrorMs (default 1 h) beyond that age, the keys are no longer trusted unconfirmed.
        moveClockAhead(3_600_000);
        const late = await mcpRequest(gw, initializeBody(), { token: await signToken(key, { sub: 'late' }) });
        assert.equal(late.status, 503, `keys past their use: HTTP ${late.status} ${late.text}`);
      } finally {
        restoreClock();
        jwks.failWith = undefined;
      }
    }, { tokenCache: { maxEntries: 0 } });
  });

  // Found by the same review: with the keys in hand past their age and a refetch of them failed, each
  // later refetch (one per jwksCooldownMs) went out before the token was checked, so a hung issuer held
  // every request whose token was not kept for up to jwksTimeoutMs (5 s by default), every cooldown.
  it('once a refetch failed, answers from the keys it holds while the next one is under way (a hung issuer)', async () => {
    jwks.failWith = undefined;
    await withGateway(jwks.url, 1_000, async (gw) => {
      const ok = await mcpRequest(gw, initializeBody(), { token: await signToken(key) });
      assert.equal(ok.status, 200, `HTTP ${ok.status} ${ok.text}`);
      jwks.failWith = 502;
      try {
        moveClockAhead(600_000 + 1_000);
        const failedRefetch = await mcpRequest(gw, initializeBody(), { token: await signToken(key, { sub: 'refetch-failed' }) });
        assert.equal(failedRefetch.status, 200, `HTTP ${failedRefetch.status} ${failedRefetch.text}`);
        // The issuer now hangs: once the cooldown (1 s) has passed, a request sends the next refetch.
        jwks.failWith = undefined;
        jwks.hold = true;
        const statuses: (number | undefined)[] = [];
        for (let i = 0; jwks.held === 0; i++) {
          assert.ok(i < 400, 'no refetch went out after the cooldown');
          const at = statuses.push(undefined) - 1;
          const token = await signToken(key, { sub: `hung-${i}` });
          void mcpRequest(gw, initializeBody(), { token }).then((r) => (statuses[at] = r.status), () => (statuses[at] = -1));
          await sleep(25);
        }
        await until('every request answered while the refetch is held (jwksTimeoutMs is 60 s)', () => statuses.every((s) => s !== undefined));
        // -1: not answered before mcpRequest gave up on it.
        assert.ok(statuses.every((s) => s === 200), `answers while the refetch is held: ${statuses.join(', ')}`);
        assert.equal(jwks.held, 1, 'the refetch is still under way');
      } finally {
        jwks.release();
        restoreClock();
      }
    }, { tokenCache: { maxEntries: 0 }, jwksTimeoutMs: 60_000 });
  });
});
