// A reload that adds a user-oauth upstream together with what it needs (vault.key, server.publicUrl):
// those are restart-only, so the config in force would have the upstream without them, a config a start
// refuses. Before, the reload was "applied" and every user's call to the upstream failed until a restart.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileGateway, type FileGateway } from '../helpers/file-gateway.js';
import { FIXTURE } from '../helpers/gateway.js';
import { ISSUER, JwksServer, makeKey, PUBLIC_URL } from '../helpers/tokens.js';

describe('a reload whose upstreams need restart-only settings it changes', () => {
  let jwks: JwksServer;
  let fg: FileGateway;
  const base = () => ({
    server: { host: '127.0.0.1', port: 0 },
    metrics: { enabled: false },
    logging: { level: process.env.LOG_LEVEL ?? 'silent' },
    pinning: { mode: 'off' },
    auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: jwks.url },
    tenants: [{ name: 'acme', endpoints: ['*'] }],
    upstreams: [{ name: 'one', transport: 'stdio', ...FIXTURE }] as unknown[],
    endpoints: [{ path: '/mcp', upstreams: ['one'] }] as unknown[],
  });

  before(async () => {
    jwks = await JwksServer.start([(await makeKey('k1')).publicJwk]);
    fg = await fileGateway('swb-reload-consent-', base());
  });
  after(async () => {
    await fg?.close();
    await jwks?.close();
  });

  it('is refused, naming what waits for a restart, and changes nothing', async () => {
    const doc = base();
    const consent = { type: 'user-oauth', clientId: 'switchboard', authorizationEndpoint: 'https://as.test/authorize', tokenEndpoint: 'https://as.test/token' };
    doc.upstreams.push({ name: 'tickets', transport: 'streamable-http', url: 'https://tickets.test/mcp', sharing: 'per-user', auth: consent });
    doc.endpoints.push({ path: '/tickets', upstreams: ['tickets'] });
    fg.write({ ...doc, server: { ...doc.server, publicUrl: PUBLIC_URL }, vault: { key: Buffer.alloc(32, 7).toString('base64') } });
    assert.equal(fg.app.gateway.config.vault.key, undefined);
    const { report } = await fg.app.reload('test');
    assert.equal(report.result, 'invalid', JSON.stringify(report));
    assert.ok(report.problems.some((p) => p.startsWith('upstreams[1].auth: ') && p.includes('vault.key') && p.includes('restart')), JSON.stringify(report.problems));
    assert.deepEqual(fg.app.gateway.config.upstreams.map((u) => u.name), ['one']);
  });
});
