// While a console is open, an operator's action (a POST or DELETE that succeeded) recomputes its views at
// once. Every non-GET request did (found by a review): refused ones (401/403) and 404s included, so anyone
// who could reach the admin port could, without credentials, start a view computation per request (with
// Redis: every replica asked, the session store scanned, the pins read). Real gateway, real admin listener
// over the real GatewayAdmin (its sessions view counted), real sockets.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { startAdminServer } from '../../src/admin/admin-server.js';
import type { AdminTarget } from '../../src/admin/admin-target.js';
import { GatewayAdmin } from '../../src/admin-target.js';
import { createLogger } from '../../src/observability/logger.js';
import { events } from '../helpers/admin-events.js';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';

const TOKEN = 'pokes-admin-token-0123456789-abcdefghij';

describe('admin /events: which requests recompute the views', () => {
  let gw: RunningGateway;
  let admin: { app: FastifyInstance; url: string };
  let computed = 0;

  before(async () => {
    gw = await startGateway({
      admin: { enabled: false, token: TOKEN },
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
    const real = new GatewayAdmin(gw.app.gateway, gw.app.reloader, createLogger('silent'));
    // The real target, its sessions view counted (one per view computation).
    const counted = new Proxy(real, {
      get: (t, k) => {
        if (k === 'sessions') return () => (computed++, t.sessions());
        const v = Reflect.get(t, k, t);
        return typeof v === 'function' ? v.bind(t) : v;
      },
    }) as AdminTarget;
    admin = await startAdminServer(counted, createLogger('silent'), '127.0.0.1', 0);
  });
  after(async () => {
    await admin?.app.close();
    await gw?.close();
  });

  const post = async (path: string, token?: string) => {
    const res = await fetch(new URL(path, admin.url), { method: 'POST', headers: token ? { authorization: `Bearer ${token}` } : {} });
    await res.arrayBuffer();
    return res.status;
  };

  it('refused and unknown requests do not; a successful action does', async () => {
    const { stream } = await events(admin.url, TOKEN);
    try {
      await until('the views on connect', () => stream!.seen.some((e) => e.event === 'pins'));
      const before = computed;
      for (let i = 0; i < 20; i++) assert.equal(await post('/reload'), 401);
      for (let i = 0; i < 20; i++) assert.equal(await post('/reload', 'a-guess'), 401);
      for (let i = 0; i < 10; i++) assert.equal(await post('/upstreams/nope/restart', TOKEN), 404);
      // The console's own tick (every 2 s) may fall in between, once or twice; one per request was 50.
      assert.ok(computed - before <= 2, `${computed - before} view computations for 50 refused or unknown requests`);
      const after = computed;
      assert.equal(await post('/upstreams/fx/restart', TOKEN), 200);
      await until('the views recomputed after the restart', () => computed > after);
    } finally {
      stream?.close();
    }
  });
});
