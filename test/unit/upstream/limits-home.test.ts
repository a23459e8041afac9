// The `limits` profile has no filesystem of its own. Its instances' home and working directory were the
// host's /tmp, common to all of them: one could leave there what another's launcher reads (an .npmrc, a
// node_modules, a Python module beside `python -m`), run by that instance with its user's token. Real
// processes through the real transport factory (a root gateway gives each a user of its own).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it, mock } from 'node:test';
import { parseConfig } from '../../../src/config/load.js';
import { GatewayError } from '../../../src/errors.js';
import type { JsonRpcMessage } from '../../../src/jsonrpc/types.js';
import { createLogger } from '../../../src/observability/logger.js';
import { PrivateHome } from '../../../src/sandbox/private-home.js';
import { UpstreamTransports } from '../../../src/upstream/transport-factory.js';
import { waitFor } from '../../helpers/wait.js';

const MARK = `.swb-planted-${randomBytes(6).toString('hex')}`;
// Where a server sharing the host's /tmp would plant: cleaned up whatever the outcome.
const secrets = mkdtempSync(join(tmpdir(), 'swb-secret-'));
after(() => {
  for (const p of [join('/tmp', MARK), join('/tmp', `${MARK}.py`)]) rmSync(p, { force: true });
  rmSync(secrets, { recursive: true, force: true });
});

/** Plants (ROLE=plant) a file in its HOME and a module in its working directory, then says what it sees there. */
const SERVER = `
const fs = require('fs'), path = require('path');
const inHome = path.join(process.env.HOME, process.env.MARK), inCwd = path.join(process.cwd(), process.env.MARK + '.py');
if (process.env.ROLE === 'plant') { fs.writeFileSync(inHome, 'planted'); fs.writeFileSync(inCwd, 'planted'); }
const params = { home: process.env.HOME, tmpdir: process.env.TMPDIR, cwd: process.cwd(), inHome: fs.existsSync(inHome), inCwd: fs.existsSync(inCwd) };
process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'seen', params }) + '\\n');
process.stdin.resume();
`;

function upstream(name: string, role: string) {
  const doc = {
    upstreams: [{ name, transport: 'stdio', command: process.execPath, args: ['-e', SERVER], env: { ROLE: role, MARK }, sandbox: { type: 'limits' } }],
    endpoints: [{ path: '/mcp', upstreams: [name] }],
  };
  return parseConfig(doc, 'test', {}, '/').upstreams[0]!;
}

async function started(transports: UpstreamTransports, name: string, role: string) {
  const t = transports.create(upstream(name, role), createLogger('silent'));
  const seen = new Promise<Record<string, any>>((resolve) => (t.onmessage = (m: JsonRpcMessage) => resolve((m as { params: Record<string, any> }).params)));
  await t.start();
  return { t, seen: await seen };
}

describe('the limits profile', () => {
  it("gives each instance a home and working directory of its own: nothing one leaves there reaches another's", async () => {
    const transports = new UpstreamTransports();
    const a = await started(transports, 'planter', 'plant');
    const b = await started(transports, 'victim', 'look');
    try {
      assert.ok(a.seen.inHome && a.seen.inCwd, 'control: the planter wrote its files');
      assert.deepEqual({ inHome: b.seen.inHome, inCwd: b.seen.inCwd }, { inHome: false, inCwd: false }, `what one instance left in ${a.seen.home} reached another`);
      assert.notEqual(b.seen.home, a.seen.home);
      assert.equal(b.seen.tmpdir, b.seen.home);
      assert.equal(b.seen.cwd, b.seen.home, 'it runs in its own folder');
    } finally {
      await Promise.all([a.t.close(), b.t.close()]);
    }
    // Gone with its instance, with what the server left in it.
    assert.ok(await waitFor(() => !existsSync(a.seen.home) && !existsSync(b.seen.home)), 'the folders were removed');
  });
});

/** A per-session server started with its user's token (exchanged), for a user the gateway holds no token of. */
function tokenUpstream() {
  const secret = join(secrets, 'client-secret');
  writeFileSync(secret, 's');
  const doc = {
    upstreams: [
      {
        name: 'gh', transport: 'stdio', command: process.execPath, args: ['-e', SERVER], sharing: 'per-session', tokenEnv: 'GITHUB_TOKEN', sandbox: { type: 'limits' },
        auth: { type: 'token-exchange', tokenEndpoint: 'https://as.test/token', clientId: 'gw', clientSecretFile: secret, audience: 'gh' },
      },
    ],
    endpoints: [{ path: '/mcp', upstreams: ['gh'] }],
  };
  return parseConfig(doc, 'test', {}, '/').upstreams[0]!;
}

describe('a limits server whose token is refused', () => {
  it('makes no home for it (a client looping on refused calls cost a folder and, as root, a fork to remove it, each)', async () => {
    const made: string[] = [];
    const remove = PrivateHome.prototype.remove;
    // Whether the home is on disk when the instance gives it back: a home made for nothing.
    mock.method(PrivateHome.prototype, 'remove', function (this: PrivateHome) {
      if (existsSync(this.path)) made.push(this.path);
      return remove.call(this);
    });
    try {
      const transports = new UpstreamTransports();
      const owner = { issuer: 'https://issuer.test', subject: 'alice', tenant: 'acme', scopes: [] };
      for (let i = 0; i < 5; i++) {
        const t = transports.create(tokenUpstream(), createLogger('silent'), owner);
        await assert.rejects(t.start(), (err: unknown) => err instanceof GatewayError && err.code === 'SWB_UPSTREAM_CREDENTIAL_REFUSED', 'refused for want of the user\'s token');
      }
      assert.deepEqual(made, [], 'a home was made for a server that was never to start');
    } finally {
      mock.restoreAll();
    }
  });
});
