// An admin JWT past its "exp" while the issuer's key set cannot be fetched (found by a review, 2026-12-07).
// The outage made every JWT "not checkable now" (503), an expired one too, though its own claims say it is
// no longer valid whatever the keys: a request with it was told to retry (the console kept retrying instead
// of asking to sign in), and an open console stream signed in with it was kept, re-checked every minute and
// kept again, getting every view and the audit tail for as long as the identity provider stayed down. An
// expired token is now refused 401 at once, outage or not; a live one is still answered 503.
// Real gateway from a real file, real JWKS server, real HTTP.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeJwt } from 'jose';
import { after, before, describe, it } from 'node:test';
import { events } from '../helpers/admin-events.js';
import { fileGateway, type FileGateway } from '../helpers/file-gateway.js';
import { FIXTURE } from '../helpers/gateway.js';
import { ISSUER, JwksServer, makeKey, PUBLIC_URL, signToken, type TestKey } from '../helpers/tokens.js';
import { until } from '../helpers/wait.js';

const STATIC = 'admin-expired-jwt-outage-0123456789-abcdef';

describe('admin API: an expired JWT while the key set cannot be fetched', () => {
  let jwks: JwksServer;
  let key: TestKey;
  let fg: FileGateway;

  before(async () => {
    key = await makeKey('admin-expired-outage');
    jwks = await JwksServer.start([key.publicJwk]);
    fg = await fileGateway('swb-admin-expired-jwt-', {
      server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
      metrics: { enabled: false },
      logging: { level: process.env.LOG_LEVEL ?? 'silent' },
      admin: { enabled: true, host: '127.0.0.1', port: 0, token: STATIC },
      // Every check asks the key set (nothing kept, no cooldown, no stale keys): the outage shows at once.
      auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: jwks.url, jwksCacheMaxAgeMs: 0, jwksCooldownMs: 0, jwksStaleIfErrorMs: 0, clockToleranceSec: 0, tokenCache: { maxEntries: 0 } },
      tenants: [{ name: 'ops', endpoints: ['*'] }],
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
  });
  after(async () => {
    jwks.failWith = undefined;
    await fg?.close();
    await jwks?.close();
  });

  const admin = (path: string, token: string, method = 'GET') => fetch(new URL(path, fg.app.adminUrl!), { method, headers: { authorization: `Bearer ${token}` } });
  /** Waits until `token` is past its exp (a wait, not an assertion on time). */
  const expired = async (token: string) => {
    const exp = decodeJwt(token).exp! * 1000;
    while (Date.now() <= exp + 1000) await sleep(200);
  };

  it('refuses a request with it 401, not 503, while a live token is still answered 503', async () => {
    const short = await signToken(key, { tenant: 'ops', sub: 'alice', scope: 'switchboard:admin', expIn: 2 });
    const live = await signToken(key, { tenant: 'ops', sub: 'alice', scope: 'switchboard:admin' });
    assert.equal((await admin('/sessions', short)).status, 200, 'accepted while valid and the key set is served');
    jwks.failWith = 500;
    try {
      await expired(short);
      const res = await admin('/sessions', short);
      const body = (await res.json()) as { error: { code: string; message: string } };
      assert.equal(res.status, 401, `HTTP ${res.status}: ${JSON.stringify(body)}`);
      assert.match(body.error.message, /expired/);
      assert.equal((await admin('/sessions', live)).status, 503, 'a token not expired is still not checkable now');
    } finally {
      jwks.failWith = undefined;
    }
  });

  it('ends an open console stream signed in with it before it gets another view', async () => {
    const short = await signToken(key, { tenant: 'ops', sub: 'alice', scope: 'switchboard:admin', expIn: 3 });
    const { status, stream } = await events(fg.app.adminUrl!, short);
    assert.equal(status, 200);
    try {
      await until('the views on connect', () => stream!.seen.some((e) => e.event === 'upstreams'));
      type Row = { draining: boolean; instances: Array<{ pid: number | null }> };
      const pids = (e: { data: { items: Row[] } }) => e.data.items.filter((u) => !u.draining).flatMap((u) => u.instances.map((i) => i.pid));
      const before = pids(stream!.seen.find((e) => e.event === 'upstreams')!);
      jwks.failWith = 500;
      await expired(short);
      // A reload (with the static token) has every stream checked at the next tick; a restart then changes
      // the upstreams view (a new process).
      assert.equal((await admin('/reload', STATIC, 'POST')).status, 200);
      assert.equal((await admin('/upstreams/fx/restart', STATIC, 'POST')).status, 200);
      const restarted = () => stream!.seen.some((e) => e.event === 'upstreams' && pids(e).some((pid) => pid !== null && !before.includes(pid)));
      const denied = () => stream!.seen.find((e) => e.event === 'denied');
      await until('the stream is denied, or sent the restarted upstream', () => denied() !== undefined || restarted());
      assert.ok(!restarted(), 'a console signed in with an expired token was sent a view after it expired');
      assert.equal(denied()?.data.status, 401);
    } finally {
      stream?.close();
      jwks.failWith = undefined;
    }
  });
});
