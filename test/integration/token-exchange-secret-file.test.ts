// A per-user upstream whose token-exchange client secret file cannot be read yet (a Secret mounted late,
// a path fixed by the operator): a user's instance then fails to build its link at all. That must be a
// failed start like any other, said to the user with its reason and retried with the backoff, so that
// once the file is there the user is served, not a link that waits "starting" for ever.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startExchangeServer, type ExchangeServer } from '../helpers/exchange-server.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startIdentityUpstream, type IdentityUpstream } from '../helpers/identity-upstream.js';
import { ISSUER, JwksServer, makeKey, mcpRequest, openSession, PUBLIC_URL, signToken, type TestKey } from '../helpers/tokens.js';

const CLIENT_ID = 'switchboard';
const CLIENT_SECRET = 'gateway-client-secret-from-a-file';
const AUDIENCE = 'https://tickets.test';

describe('token exchange with a client secret file that appears after the gateway started', () => {
  let key: TestKey;
  let jwks: JwksServer;
  let as: ExchangeServer;
  let upstream: IdentityUpstream;
  let gw: RunningGateway;
  const dir = mkdtempSync(join(tmpdir(), 'swb-late-secret-'));
  const secretFile = join(dir, 'client-secret');

  before(async () => {
    key = await makeKey('k1');
    jwks = await JwksServer.start([key.publicJwk]);
    as = await startExchangeServer({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, subjectIssuer: ISSUER, subjectKeys: [key.publicJwk], subjectAudience: PUBLIC_URL });
    upstream = await startIdentityUpstream({ issuer: as.issuer, audience: AUDIENCE, actor: CLIENT_ID, keys: as.keys });
    gw = await startGateway({
      server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
      auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: jwks.url },
      tenants: [{ name: 'acme', endpoints: ['*'] }],
      upstreams: [
        {
          name: 'tickets',
          transport: 'streamable-http',
          url: upstream.url,
          sharing: 'per-user',
          restart: { initialDelayMs: 50, maxDelayMs: 200 },
          auth: { type: 'token-exchange', tokenEndpoint: as.tokenEndpoint, clientId: CLIENT_ID, clientSecretFile: secretFile, audience: AUDIENCE, scope: 'tickets' },
        },
      ],
      endpoints: [{ path: '/mcp', upstreams: ['tickets'] }],
    });
  });

  after(async () => {
    await gw?.close();
    await upstream?.close();
    await as?.close();
    await jwks?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the user hears why, and is served once the file can be read', async () => {
    const token = await signToken(key, { sub: 'alice', expIn: 600 });
    const sid = await openSession(gw, token);
    const call = (id: number) => mcpRequest(gw, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'whoami', arguments: { claimed: 'alice' } } }, { token, sid });

    const first = await call(2);
    const err = first.json?.error;
    assert.ok(err, `an error while the file is missing: ${first.text}`);
    assert.match(err.message, /clientSecretFile cannot be read \(ENOENT\)/, `the reason, not "starting": ${err.message}`);
    assert.ok(!err.message.includes(dir), 'the host path stays in the log');

    writeFileSync(secretFile, `${CLIENT_SECRET}\n`);
    let served: string | undefined;
    let last = '';
    for (let i = 0; i < 60 && served === undefined; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const r = await call(10 + i);
      last = r.text;
      served = r.json?.result?.content?.[0]?.text;
    }
    assert.equal(served, 'alice', `served as alice within 6 s of the file appearing; last answer: ${last}`);
  });
});
