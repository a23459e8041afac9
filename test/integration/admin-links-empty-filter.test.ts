// DELETE /links/{upstream}?subject=bob&tenant= (an empty narrowing filter: a script's unset $TENANT) read
// the empty filter as absent, and revoked bob's links in every tenant, as a filter given twice did before
// 2026-12-06. No tenant, issuer or subject is empty: an empty filter is refused (400), on GET too. Real
// gateway with a vault and the admin API on real ports; links are stored in the vault as a consent stores them.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { ISSUER, makeKey, PUBLIC_URL } from '../helpers/tokens.js';

const TOKEN = 'admin-token-for-link-filters-0123456789-ab';
const VAULT_KEY = Buffer.alloc(32, 9).toString('base64');

describe('admin API link filters given empty', () => {
  let dir: string;
  let gw: RunningGateway;
  const bob = (tenant: string) => ({ issuer: ISSUER, subject: 'bob', tenant });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'swb-links-filter-'));
    const keyFile = join(dir, 'key.json');
    writeFileSync(keyFile, JSON.stringify((await makeKey('k1')).publicJwk));
    // Never contacted: links are stored directly, no consent runs (port 9, discard).
    const closed = 'http://127.0.0.1:9';
    gw = await startGateway({
      server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
      admin: { enabled: true, host: '127.0.0.1', port: 0, token: TOKEN },
      auth: { mode: 'jwt', issuer: ISSUER, keys: [keyFile] },
      tenants: [{ name: 'acme', endpoints: ['*'] }, { name: 'other', endpoints: ['*'] }],
      vault: { key: VAULT_KEY },
      upstreams: [{ name: 'ledger', transport: 'streamable-http', url: `${closed}/mcp`, sharing: 'per-user', auth: { type: 'user-oauth', clientId: 'switchboard', authorizationEndpoint: `${closed}/authorize`, tokenEndpoint: `${closed}/token` } }],
      endpoints: [{ path: '/mcp', upstreams: ['ledger'] }],
    });
    const vault = gw.app.gateway.consent!.vault;
    for (const tenant of ['acme', 'other']) await vault.save('ledger', bob(tenant), { accessToken: `at-${tenant}`, expiresAt: Date.now() + 600_000 });
  });
  after(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const admin = async (method: string, path: string) => {
    const res = await fetch(new URL(path, gw.app.adminUrl!), { method, headers: { authorization: `Bearer ${TOKEN}` } });
    return { status: res.status, body: (await res.json()) as { items?: Array<{ tenant: string }>; error?: { message: string } } };
  };

  it('refuses a revocation whose tenant or issuer filter is empty, and revokes nothing', async () => {
    for (const empty of ['tenant=', 'issuer=']) {
      const r = await admin('DELETE', `/links/ledger?subject=bob&${empty}`);
      assert.equal(r.status, 400, `${empty}: ${JSON.stringify(r.body)}`);
      assert.match(r.body.error!.message, new RegExp(`\\?${empty}`));
    }
    const left = await admin('GET', '/links?subject=bob');
    assert.deepEqual(left.body.items!.map((l) => l.tenant).sort(), ['acme', 'other'], 'both links are still there');
  });

  it('refuses a listing with an empty filter too, and a named tenant still narrows the revocation', async () => {
    assert.equal((await admin('GET', '/links?subject=')).status, 400);
    const revoked = await admin('DELETE', '/links/ledger?subject=bob&tenant=acme');
    assert.equal(revoked.status, 200);
    assert.deepEqual(revoked.body.items!.map((l) => l.tenant), ['acme']);
    assert.deepEqual((await admin('GET', '/links?subject=bob')).body.items!.map((l) => l.tenant), ['other']);
  });
});
