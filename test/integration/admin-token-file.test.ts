// admin.tokenFile is read on every request (a rotated file takes effect at once). A file that cannot be
// read refuses every admin request without telling the caller where the server keeps it: the answer had
// the error's text, with the file's path (found by a review).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';

const TOKEN = 'admin-token-from-a-file-0123456789-abcdef';

describe('admin.tokenFile that goes missing', () => {
  let dir: string;
  let file: string;
  let gw: RunningGateway;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'swb-admin-token-'));
    file = join(dir, 'admin-token');
    writeFileSync(file, `${TOKEN}\n`);
    gw = await startGateway({
      admin: { enabled: true, host: '127.0.0.1', port: 0, tokenFile: file },
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
  });
  after(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const get = (token: string) => fetch(new URL('/sessions', gw.app.adminUrl!), { headers: { authorization: `Bearer ${token}` } });

  it('refuses every request, and no answer names the file', async () => {
    assert.equal((await get(TOKEN)).status, 200, 'the token from the file');
    rmSync(file);
    for (const token of [TOKEN, 'a-guess']) {
      const r = await get(token);
      const text = await r.text();
      assert.equal(r.status, 500, text);
      assert.ok(!text.includes(dir), `the answer names the file: ${text}`);
      assert.match(text, /token file cannot be read/);
    }
  });
});
