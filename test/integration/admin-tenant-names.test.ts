// The admin API's tenants (the console's Tenants panel) for tenants whose names are also names of every
// JavaScript object's members (found by a review): the config allows [A-Za-z0-9._-], so "constructor"
// and "__proto__" are valid tenant names. The usage per tenant was counted in a plain object: for
// "constructor" it counted onto Object (the constructor every object inherits) and the tenant showed no
// sessions; for "__proto__" it wrote `sessions` and `inflight` onto Object.prototype, so every object of
// the gateway process had them (NaN), from the first look at the Tenants panel on.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { ISSUER, makeKey, openSession, PUBLIC_URL, signToken } from '../helpers/tokens.js';

const TOKEN = 'admin-tenant-names-token-0123456789-abcdef';

describe('admin API: tenants named like object members', () => {
  const dir = mkdtempSync(join(tmpdir(), 'swb-tenant-names-'));
  let gw: RunningGateway;
  let key: Awaited<ReturnType<typeof makeKey>>;

  before(async () => {
    key = await makeKey('k1');
    const keyFile = join(dir, 'key.json');
    writeFileSync(keyFile, JSON.stringify(key.publicJwk));
    gw = await startGateway({
      server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
      admin: { enabled: true, port: 0, token: TOKEN },
      auth: { mode: 'jwt', issuer: ISSUER, keys: [keyFile] },
      tenants: ['constructor', '__proto__', 'acme'].map((name) => ({ name, endpoints: ['*'] })),
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
  });
  after(async () => {
    delete (Object.prototype as Record<string, unknown>).sessions;
    delete (Object.prototype as Record<string, unknown>).inflight;
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("counts each tenant's sessions as its own, and leaves every object's prototype alone", async () => {
    for (const tenant of ['constructor', '__proto__', 'acme']) await openSession(gw, await signToken(key, { tenant, sub: `user-of-${tenant}` }));
    const res = await fetch(new URL('/tenants', gw.app.adminUrl!), { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.status, 200);
    const usage = Object.fromEntries(((await res.json()) as { items: Array<{ name: string; usage: { sessions: number } }> }).items.map((t) => [t.name, t.usage.sessions]));
    assert.deepEqual(usage, { constructor: 1, ['__proto__']: 1, acme: 1 });
    assert.equal('sessions' in {}, false, 'Object.prototype has no sessions member');
  });
});
