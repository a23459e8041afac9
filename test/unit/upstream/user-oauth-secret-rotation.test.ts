// A user-oauth upstream's clientSecretFile rotated while the gateway runs (a Kubernetes Secret updated, the
// old secret revoked at the authorization server): the next token request must carry the new secret. The
// client read the file once, when it was built, and sent that secret until a restart (a reload kept it).
// A real token endpoint on a loopback port reads the client authentication each request sends.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Agent } from 'undici';
import { parseConfig } from '../../../src/config/load.js';
import { UserOAuthClient, type UserOAuthSettings } from '../../../src/upstream/user-oauth-client.js';

describe('a user-oauth client whose secret file is rotated', () => {
  const dir = mkdtempSync(join(tmpdir(), 'swb-oauth-secret-'));
  const secretFile = join(dir, 'client-secret');
  const sent: string[] = [];
  let server: Server;
  let tokenEndpoint: string;
  const agent = new Agent();

  before(async () => {
    server = createServer((req, res) => {
      sent.push(Buffer.from((req.headers.authorization ?? '').replace(/^Basic /i, ''), 'base64').toString());
      req.resume().on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: `at-${sent.length}`, token_type: 'Bearer', expires_in: 3600 }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    tokenEndpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
  });

  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends the secret the file holds at each token request', async () => {
    writeFileSync(secretFile, 'secret-before\n');
    const config = parseConfig({
      server: { host: '127.0.0.1', publicUrl: 'https://gw.test' },
      auth: { mode: 'jwt', issuer: 'https://issuer.test', hmacSecret: 'x'.repeat(32), allowHmac: true },
      vault: { key: Buffer.alloc(32, 7).toString('base64') },
      tenants: [{ name: 'acme', endpoints: ['/mcp'] }],
      endpoints: [{ path: '/mcp', upstreams: ['tickets'] }],
      upstreams: [{
        name: 'tickets',
        transport: 'streamable-http',
        url: 'http://127.0.0.1:9/mcp',
        sharing: 'per-user',
        auth: { type: 'user-oauth', clientId: 'switchboard', clientSecretFile: secretFile, authorizationEndpoint: 'https://as.test/authorize', tokenEndpoint },
      }],
    });
    const settings = (config.upstreams[0] as { auth: UserOAuthSettings }).auth;
    const client = new UserOAuthClient({ name: 'tickets', url: 'http://127.0.0.1:9/mcp' }, settings, agent, 5000);

    await client.refresh('rt-1');
    writeFileSync(secretFile, 'secret-after\n');
    await client.refresh('rt-2');
    assert.deepEqual(sent, ['switchboard:secret-before', 'switchboard:secret-after']);
  });
});
