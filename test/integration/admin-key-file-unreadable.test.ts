// The admin API while a key file of auth.keys cannot be read (found by a review, 2026-12-06). The admin
// listener builds its JWT verifier when it first checks a request after the start or a reload, and it
// read the key files there, before it looked at the request's token: a key file gone since the edge read
// it (a Secret replaced, a volume remounted) failed every admin request, the static token's too, with a
// 500 naming the file and the error, to any caller without a token; open consoles were ended. The edge
// kept serving with the keys it holds. Now such a JWT is answered 503 (not checkable now; the log says
// why), the static token works, no answer names the file, and JWTs are checked again once it is back.
// Real gateway from a real file.
import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileGateway, type FileGateway } from '../helpers/file-gateway.js';
import { FIXTURE } from '../helpers/gateway.js';
import { ISSUER, makeKey, PUBLIC_URL, signToken, type TestKey } from '../helpers/tokens.js';

const TOKEN = 'admin-token-for-key-file-tests-0123456789';

function doc(keyFile: string, scope: string): Record<string, unknown> {
  return {
    server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
    metrics: { enabled: false },
    logging: { level: process.env.LOG_LEVEL ?? 'silent' },
    admin: { enabled: true, host: '127.0.0.1', port: 0, token: TOKEN, scope },
    auth: { mode: 'jwt', issuer: ISSUER, keys: [keyFile] },
    tenants: [{ name: 'acme', endpoints: ['*'] }],
    upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
    endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
  };
}

describe('the admin API while a key file cannot be read', () => {
  let fg: FileGateway;
  let key: TestKey;
  let keyDir: string;
  let keyFile: string;
  let admin: URL;

  before(async () => {
    key = await makeKey('k1');
    keyDir = mkdtempSync(join(tmpdir(), 'swb-admin-keys-'));
    keyFile = join(keyDir, 'issuer.pem');
    writeFileSync(keyFile, key.spki);
    fg = await fileGateway('swb-admin-keyfile-', doc(keyFile, 'switchboard:admin'));
    admin = new URL(fg.app.adminUrl!);
  });
  after(async () => {
    await fg?.close();
    rmSync(keyDir, { recursive: true, force: true });
  });

  const get = async (bearer: string | undefined) => {
    const res = await fetch(new URL('/sessions', admin), { headers: bearer ? { authorization: `Bearer ${bearer}` } : {} });
    return { status: res.status, body: await res.text() };
  };
  // The PEM names no kid: the token names none either.
  const jwt = (scope: string) => signToken(key, { scope, kid: null });

  /** With the key file gone: the static token works, a JWT is not checkable now, nothing names the file. */
  async function whileGone(scope: string): Promise<void> {
    renameSync(keyFile, `${keyFile}.gone`);
    try {
      const withToken = await get(TOKEN);
      assert.equal(withToken.status, 200, `the static token: ${withToken.body}`);
      const withJwt = await get(await jwt(scope));
      assert.equal(withJwt.status, 503, `a JWT: ${withJwt.body}`);
      const anonymous = await get(undefined);
      assert.equal(anonymous.status, 401, anonymous.body);
      for (const r of [withToken, withJwt, anonymous]) assert.ok(!r.body.includes(keyDir) && !r.body.includes('ENOENT'), r.body);
    } finally {
      renameSync(`${keyFile}.gone`, keyFile);
    }
    const back = await get(await jwt(scope));
    assert.equal(back.status, 200, `the file back, JWTs are checked again: ${back.body}`);
  }

  it('gone after the start, before the first admin request', async () => {
    await whileGone('switchboard:admin');
  });

  it('gone after a reload that applied (verification is built again)', async () => {
    fg.write(doc(keyFile, 'ops:admin'));
    const { report } = await fg.app.reload('test');
    assert.equal(report.result, 'applied', JSON.stringify(report));
    await whileGone('ops:admin');
  });
});
