// A reload while the issuer's key set cannot be fetched: the gateway verifies tokens with the key set it
// already holds. A reload (even one that changes nothing, or only an upstream) must not throw that away
// and turn an issuer's outage, which the gateway rode out until then, into a refusal of every client.
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { App } from '../../src/app.js';
import { fileGateway } from '../helpers/file-gateway.js';
import { FIXTURE, type RunningGateway } from '../helpers/gateway.js';
import { ISSUER, JwksServer, PUBLIC_URL, initializeBody, makeKey, mcpRequest, signToken, type TestKey } from '../helpers/tokens.js';

function doc(jwksUrl: string, upstreams = ['fixture']): Record<string, unknown> {
  return {
    server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
    metrics: { enabled: false },
    logging: { level: process.env.LOG_LEVEL ?? 'silent' },
    pinning: { mode: 'off' },
    auth: { mode: 'jwt', issuer: ISSUER, audience: [PUBLIC_URL], jwksUrl },
    tenants: [{ name: 'acme', endpoints: ['/mcp'] }],
    upstreams: upstreams.map((name) => ({ name, transport: 'stdio', ...FIXTURE, args: [resolve(FIXTURE.args[0]!)], sharing: 'shared' })),
    endpoints: [{ path: '/mcp', upstreams }],
  };
}

describe('a reload while the key set is unreachable', () => {
  let jwks: JwksServer;
  let key: TestKey;
  let app: App;
  let gw: RunningGateway;
  let write: (doc: Record<string, unknown>) => void;
  let close: () => Promise<void>;

  before(async () => {
    key = await makeKey('held');
    jwks = await JwksServer.start([key.publicJwk]);
    ({ app, gw, write, close } = await fileGateway('swb-reload-jwks-', doc(jwks.url)));
  });
  after(async () => {
    await close();
    await jwks?.close();
  });

  it('keeps the key set it holds: clients with valid tokens go on being served, by the unchanged reload and by one that adds an upstream', async () => {
    assert.equal((await mcpRequest(gw, initializeBody(), { token: await signToken(key, { sub: 'first' }) })).status, 200);
    const fetched = jwks.fetches;
    jwks.failWith = 503; // the issuer is down from here on
    assert.equal((await mcpRequest(gw, initializeBody(), { token: await signToken(key, { sub: 'before-reload' }) })).status, 200, 'a new token is verified with the key set held');

    assert.equal((await app.reload('test')).report.result, 'unchanged');
    const after = await mcpRequest(gw, initializeBody(), { token: await signToken(key, { sub: 'after-unchanged' }) });
    assert.equal(after.status, 200, `after a reload that changed nothing: HTTP ${after.status} ${after.text}`);

    write(doc(jwks.url, ['fixture', 'second']));
    assert.equal((await app.reload('test')).report.result, 'applied');
    const later = await mcpRequest(gw, initializeBody(), { token: await signToken(key, { sub: 'after-applied' }) });
    assert.equal(later.status, 200, `after a reload that added an upstream: HTTP ${later.status} ${later.text}`);
    assert.equal(jwks.fetches, fetched, 'the key set was not fetched again');
  });

  it('a reload that names another key set URL starts from that one', async () => {
    const other = await JwksServer.start([key.publicJwk]);
    try {
      write(doc(other.url, ['fixture', 'second']));
      assert.equal((await app.reload('test')).report.result, 'applied');
      assert.equal((await mcpRequest(gw, initializeBody(), { token: await signToken(key, { sub: 'moved' }) })).status, 200);
      assert.equal(other.fetches, 1, 'the new URL is fetched');
    } finally {
      await other.close();
    }
  });
});
