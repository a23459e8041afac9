// GET /config showed `auth.clientSecret: "[redacted]"` for a token-exchange upstream configured with
// clientSecretFile alone: a secret that is not there, which sent an operator looking for where it was set.
// The view shows what is configured: the file's path (not a secret) and no clientSecret key; a secret given
// inline is still "[redacted]". Checked for every OAuth client block: an upstream's token-exchange and
// user-oauth, and vault.verifyUser. Real gateway, admin API on a real port.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { ISSUER, makeKey, PUBLIC_URL } from '../helpers/tokens.js';

const TOKEN = 'admin-token-for-secret-files-0123456789-ab';
const INLINE = 'inline-client-secret-never-shown';

describe('admin API GET /config: a client secret read from a file', () => {
  let dir: string;
  let secretFile: string;
  let gw: RunningGateway;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'swb-secret-files-'));
    const keyFile = join(dir, 'key.json');
    writeFileSync(keyFile, JSON.stringify((await makeKey('k1')).publicJwk));
    secretFile = join(dir, 'client-secret');
    writeFileSync(secretFile, 'file-client-secret\n');
    // Never contacted (port 9, discard): only the config's view is read.
    const closed = 'http://127.0.0.1:9';
    const remote = (name: string, auth: Record<string, unknown>) => ({ name, transport: 'streamable-http' as const, url: `${closed}/${name}`, sharing: 'per-user' as const, auth: auth as never });
    gw = await startGateway({
      server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
      admin: { enabled: true, host: '127.0.0.1', port: 0, token: TOKEN },
      auth: { mode: 'jwt', issuer: ISSUER, keys: [keyFile] },
      tenants: [{ name: 'acme', endpoints: ['*'] }],
      vault: { key: Buffer.alloc(32, 4).toString('base64'), verifyUser: { clientId: 'gw', clientSecretFile: secretFile, authorizationServer: `${closed}/idp` } },
      upstreams: [
        remote('exchange-file', { type: 'token-exchange', tokenEndpoint: `${closed}/token`, clientId: 'gw', clientSecretFile: secretFile, actorToken: false }),
        remote('exchange-inline', { type: 'token-exchange', tokenEndpoint: `${closed}/token`, clientId: 'gw', clientSecret: INLINE, actorToken: false }),
        remote('consent-file', { type: 'user-oauth', clientId: 'gw', clientSecretFile: secretFile, authorizationServer: `${closed}/as` }),
        remote('consent-public', { type: 'user-oauth', clientId: 'gw', authorizationServer: `${closed}/as` }),
      ],
      endpoints: [{ path: '/mcp', upstreams: ['exchange-file', 'exchange-inline', 'consent-file', 'consent-public'] }],
    });
  });
  after(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows the file and no clientSecret where only a file is set; an inline secret redacted', async () => {
    const res = await fetch(new URL('/config', gw.app.adminUrl!), { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { upstreams: Array<{ name: string; auth: Record<string, unknown> }>; vault: { verifyUser: Record<string, unknown> } };
    const auth = (name: string) => body.upstreams.find((u) => u.name === name)!.auth;
    for (const [name, a] of [['exchange-file', auth('exchange-file')], ['consent-file', auth('consent-file')], ['vault.verifyUser', body.vault.verifyUser]] as const) {
      assert.equal(a.clientSecretFile, secretFile, name);
      assert.equal('clientSecret' in a, false, `${name}: ${JSON.stringify(a)}`);
    }
    assert.equal('clientSecret' in auth('consent-public'), false);
    assert.equal(auth('exchange-inline').clientSecret, '[redacted]');
    assert.doesNotMatch(JSON.stringify(body), new RegExp(INLINE));
  });
});
