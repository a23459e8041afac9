// admin.watchConfig watched the config file only: an auth.keys file rotated in place (a Kubernetes Secret
// updated, a new PEM renamed over the old) was applied only by a SIGHUP or POST /reload, so with the watch
// on, tokens of the new key were refused (401) until someone sent one, while the README said the watch
// reloads on change. The watch now covers the key files of the config in force too, a key file added by a
// reload included. Real gateway from a real file, real files rotated, real HTTP.
import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileGateway, type FileGateway } from '../helpers/file-gateway.js';
import { FIXTURE } from '../helpers/gateway.js';
import { initializeBody, ISSUER, makeKey, mcpRequest, PUBLIC_URL, signToken, type TestKey } from '../helpers/tokens.js';
import { until } from '../helpers/wait.js';

function doc(keys: string[]): Record<string, unknown> {
  return {
    server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
    metrics: { enabled: false },
    logging: { level: process.env.LOG_LEVEL ?? 'silent' },
    admin: { watchConfig: true },
    auth: { mode: 'jwt', issuer: ISSUER, keys },
    tenants: [{ name: 'acme', endpoints: ['*'] }],
    upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
    endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
  };
}

describe('admin.watchConfig and the auth.keys files', { timeout: 60_000 }, () => {
  let fg: FileGateway;
  let keyDir: string;
  let first: TestKey;
  const keyFile = (name: string) => join(keyDir, name);
  /** As a Secret or an operator rotates a file: the new content written beside it, renamed over it. */
  const rotate = (name: string, key: TestKey) => {
    writeFileSync(keyFile(`${name}.new`), key.spki);
    renameSync(keyFile(`${name}.new`), keyFile(name));
  };
  // The PEMs name no kid: the tokens name none either.
  const status = async (key: TestKey) => (await mcpRequest(fg.gw, initializeBody(), { token: await signToken(key, { tenant: 'acme', kid: null }) })).status;

  before(async () => {
    keyDir = mkdtempSync(join(tmpdir(), 'swb-watch-keys-'));
    first = await makeKey('a1');
    writeFileSync(keyFile('a.pem'), first.spki);
    fg = await fileGateway('swb-watch-keys-config-', doc([keyFile('a.pem')]));
  });
  after(async () => {
    await fg?.close();
    rmSync(keyDir, { recursive: true, force: true });
  });

  it('a key file rotated in place is applied without a SIGHUP: the new key is honoured, the old refused', async () => {
    assert.equal(await status(first), 200);
    const next = await makeKey('a2');
    rotate('a.pem', next);
    await until('the rotated key honoured', async () => (await status(next)) === 200);
    assert.equal(await status(first), 401, 'the key rotated out is refused');
  });

  it('a key file that a reload added to auth.keys is watched from then on', async () => {
    const b1 = await makeKey('b1');
    writeFileSync(keyFile('b.pem'), b1.spki);
    fg.write(doc([keyFile('a.pem'), keyFile('b.pem')])); // applied by the config file's own watch
    await until('the added key file honoured', async () => (await status(b1)) === 200);
    const b2 = await makeKey('b2');
    rotate('b.pem', b2);
    await until('the added file, rotated, honoured', async () => (await status(b2)) === 200);
    assert.equal(await status(b1), 401);
  });
});
