// The admin API took a JWT with the admin scope whatever audience it was issued for, one endpoint's
// included (`<publicUrl>/other`): since 2026-12-07 such a token is that endpoint's resource alone on the
// MCP listener (an authorization server may issue it to a client, or with a consent, for that endpoint
// only), yet it opened the whole admin API. The admin API is the gateway's as a whole: it now takes a
// token only for an audience that names no endpoint (`<publicUrl>` by default), and answers 401 saying
// why. Found by a review. Real gateway, real admin listener.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { ISSUER, makeKey, PUBLIC_URL, signToken, type TestKey } from '../helpers/tokens.js';

describe('the admin API and an endpoint\'s audience', () => {
  let dir: string;
  let key: TestKey;
  let gw: RunningGateway;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'swb-admin-aud-'));
    key = await makeKey('k1');
    writeFileSync(join(dir, 'key.json'), JSON.stringify(key.publicJwk));
    gw = await startGateway({
      server: { publicUrl: PUBLIC_URL },
      admin: { enabled: true, host: '127.0.0.1', port: 0 },
      auth: { mode: 'jwt', issuer: ISSUER, keys: [join(dir, 'key.json')] },
      tenants: [{ name: 'ops', endpoints: ['*'] }],
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
      endpoints: [
        { path: '/mcp', upstreams: ['fx'] },
        { path: '/other', upstreams: ['fx'] },
      ],
    });
  });
  after(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const sessions = async (aud: string | string[]) => {
    const token = await signToken(key, { tenant: 'ops', sub: 'bob', scope: 'switchboard:admin', aud });
    const res = await fetch(new URL('/sessions', gw.app.adminUrl!), { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, body: await res.text() };
  };

  it('refuses a token issued for one endpoint alone (401, saying so)', async () => {
    for (const aud of [`${PUBLIC_URL}/other`, [`${PUBLIC_URL}/other`, `${PUBLIC_URL}/mcp`]]) {
      const r = await sessions(aud);
      assert.equal(r.status, 401, r.body);
      const { error } = JSON.parse(r.body) as { error: { code: string; message: string } };
      assert.equal(error.code, 'unauthorized');
      assert.match(error.message, /issued for the endpoint .*\/other.*not for the gateway as a whole/, error.message);
    }
  });

  it('takes a token for the gateway (its public URL, as written or as its href), alone or beside an endpoint\'s', async () => {
    for (const aud of [PUBLIC_URL, `${PUBLIC_URL}/`, [`${PUBLIC_URL}/other`, PUBLIC_URL]]) {
      const r = await sessions(aud);
      assert.equal(r.status, 200, `${JSON.stringify(aud)}: ${r.body}`);
    }
  });
});
