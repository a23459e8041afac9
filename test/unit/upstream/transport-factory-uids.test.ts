import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, describe, it, mock } from 'node:test';
import { Agent } from 'undici';
import { parseConfig } from '../../../src/config/load.js';
import { GatewayError, toJsonRpcError } from '../../../src/errors.js';
import { createLogger } from '../../../src/observability/logger.js';
import { UidPool } from '../../../src/sandbox/uid-pool.js';
import { UpstreamTransports } from '../../../src/upstream/transport-factory.js';
import { UserOAuthClient } from '../../../src/upstream/user-oauth-client.js';

const logger = createLogger('silent');
const dir = mkdtempSync(join(tmpdir(), 'swb-secret-'));
/** A client secret file that is not there (a Secret not mounted, a typo in the path). */
const MISSING = join(dir, 'exchange-client-secret');
after(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => mock.restoreAll());

const owner = { issuer: 'https://issuer.test', subject: 'alice', tenant: 'acme', scopes: [] };

function tokenUpstream() {
  const doc = {
    upstreams: [
      {
        name: 'gh', transport: 'stdio', command: process.execPath, sharing: 'per-session', tokenEnv: 'GITHUB_TOKEN', sandbox: { type: 'limits' },
        auth: { type: 'token-exchange', tokenEndpoint: 'https://as.test/token', clientId: 'gw', clientSecretFile: MISSING, audience: 'gh' },
      },
    ],
    endpoints: [{ path: '/mcp', upstreams: ['gh'] }],
  };
  return parseConfig(doc, 'test', {}, dir).upstreams[0]!;
}

describe('a per-session stdio upstream whose token source cannot be built', () => {
  it('gives back the sandbox uid it took (a root gateway would run out after 65,536 session opens)', () => {
    // The pool engages for a root gateway only. No process is started here (create throws first), so
    // a gateway that is not root is told it is: nothing in this test needs the privilege itself.
    if (process.getuid?.() !== 0) mock.method(process as { getuid: () => number }, 'getuid', () => 0);
    const acquire = mock.method(UidPool.prototype, 'acquire');
    const release = mock.method(UidPool.prototype, 'release');
    const transports = new UpstreamTransports();
    const upstream = tokenUpstream();
    for (let i = 0; i < 3; i++) assert.throws(() => transports.create(upstream, logger, owner));
    const taken = acquire.mock.calls.map((c) => c.result);
    const given = release.mock.calls.map((c) => c.arguments[0]);
    assert.deepEqual(given, taken, `every uid taken is given back: took ${JSON.stringify(taken)}, gave back ${JSON.stringify(given)}`);
  });

  it('tells the client which upstream and why, without the host path of the secret file', () => {
    const transports = new UpstreamTransports();
    let thrown: unknown;
    try {
      transports.create(tokenUpstream(), logger, owner);
    } catch (err) {
      thrown = err;
    }
    assert.ok(thrown instanceof GatewayError, `a coded error: ${String(thrown)}`);
    assert.equal(thrown.code, 'SWB_CONFIG_INVALID');
    assert.match(thrown.message, /upstream "gh".*clientSecretFile.*ENOENT/);
    const wire = toJsonRpcError(thrown);
    assert.doesNotMatch(JSON.stringify({ message: wire.message, data: wire.data }), new RegExp(dir), 'the host path reaches the client');
  });

  it('the same for a consent (user-oauth) client', () => {
    const settings = { type: 'user-oauth', clientId: 'gw', clientSecretFile: MISSING, authorizationEndpoint: 'https://as.test/authorize', tokenEndpoint: 'https://as.test/token' } as never;
    const agent = new Agent();
    assert.throws(
      () => new UserOAuthClient({ name: 'notes' }, settings, agent, 60_000),
      (err: unknown) => err instanceof GatewayError && /upstream "notes".*clientSecretFile.*ENOENT/.test(err.message) && !err.message.includes(dir),
    );
    void agent.close();
  });
});
