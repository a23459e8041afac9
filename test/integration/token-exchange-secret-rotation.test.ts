// A token-exchange upstream's clientSecretFile rotated (a Kubernetes Secret updated, the old secret revoked
// at the authorization server), then the config reloaded as an operator does after a rotation: the gateway
// must authenticate with the new secret. It read the file once, when the upstream's first user started,
// and sent that secret until a restart: a reload (nothing to apply) kept it, and every exchange after the
// revocation was refused.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startExchangeParts, type ExchangeParts } from '../helpers/exchange-rig.js';
import { fileGateway, type FileGateway } from '../helpers/file-gateway.js';
import { ISSUER, mcpRequest, openSession, PUBLIC_URL, signToken } from '../helpers/tokens.js';

const OLD_SECRET = 'gateway-client-secret-before-rotation';
const NEW_SECRET = 'gateway-client-secret-after-rotation';

describe('token exchange whose client secret file is rotated while the gateway runs', () => {
  let parts: ExchangeParts;
  let gateway: FileGateway;
  const dir = mkdtempSync(join(tmpdir(), 'swb-rotated-secret-'));
  const secretFile = join(dir, 'client-secret');

  before(async () => {
    writeFileSync(secretFile, `${OLD_SECRET}\n`);
    parts = await startExchangeParts({ clientSecret: OLD_SECRET, exchange: { clientSecretFile: secretFile } });
    gateway = await fileGateway('swb-rotated-secret-config-', {
      server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
      auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: parts.jwks.url },
      tenants: [{ name: 'acme', endpoints: ['*'] }],
      upstreams: [parts.tickets()],
      endpoints: [{ path: '/mcp', upstreams: ['tickets'] }],
    });
  });

  after(async () => {
    await gateway?.close();
    await parts?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const whoami = async (sub: string) => {
    const token = await signToken(parts.key, { sub, expIn: 600 });
    const sid = await openSession(gateway.gw, token);
    const r = await mcpRequest(gateway.gw, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: { claimed: sub } } }, { token, sid });
    return { served: r.json?.result?.content?.[0]?.text as string | undefined, text: r.text };
  };

  it('a user starting after the rotation and a reload is exchanged with the new secret', async () => {
    assert.equal((await whoami('alice')).served, 'alice', 'served with the secret the file held at start');

    writeFileSync(secretFile, `${NEW_SECRET}\n`);
    parts.as.rotateClientSecret(NEW_SECRET);
    assert.equal((await gateway.app.reload('test')).report.result, 'unchanged');

    const bob = await whoami('bob');
    assert.equal(bob.served, 'bob', `bob's exchange authenticated with the rotated secret; answer: ${bob.text}`);
  });
});
