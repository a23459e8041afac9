// Nothing said so when auth.keys trusted the published development key (deploy/dev-keys, whose private
// half ships with Switchboard: anyone can sign tokens with it, for any tenant and scope, the admin scope
// included) on a gateway reachable beyond loopback (a non-loopback server.host or server.publicUrl). Now
// the start and every reload write a warn line naming the key file, and
// switchboard_auth_development_key_exposed reads 1 while it is so. The quick start (loopback) stays
// quiet. Found by a review. Real gateway from a real file, reloaded.
import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { signDevToken } from '../../src/auth/dev-token.js';
import { fileGateway } from '../helpers/file-gateway.js';
import { FIXTURE } from '../helpers/gateway.js';

const DEV_PUBLIC = join(import.meta.dirname, '..', '..', 'deploy', 'dev-keys', 'dev-public.jwk.json');
const DEV_PRIVATE = join(import.meta.dirname, '..', '..', 'deploy', 'dev-keys', 'dev-private.jwk.json');

const doc = (publicUrl: string, key: string) => ({
  server: { host: '127.0.0.1', port: 0, publicUrl },
  metrics: { port: 0 },
  auth: { mode: 'jwt', issuer: 'https://idp.test', keys: [key], algorithms: ['EdDSA'] },
  tenants: [{ name: 'dev', endpoints: ['*'] }],
  upstreams: [{ name: 'one', transport: 'stdio', ...FIXTURE }],
  endpoints: [{ path: '/mcp', upstreams: ['one'] }],
});

const gauge = async (metricsUrl: string) => /^switchboard_auth_development_key_exposed (\d+)$/m.exec(await (await fetch(metricsUrl)).text())?.[1];

describe('the published development key on a gateway reachable beyond loopback', () => {
  let dir: string;
  let pem: string;
  let own: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'swb-dev-key-'));
    // The same key as PEM, under another name: it is the key that counts, not its file or kid.
    pem = join(dir, 'renamed.pem');
    writeFileSync(pem, createPublicKey({ key: JSON.parse(readFileSync(DEV_PUBLIC, 'utf8')), format: 'jwk' }).export({ type: 'spki', format: 'pem' }));
    own = join(dir, 'own.pem');
    writeFileSync(own, generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const warned = (lines: string[], key: string) =>
    lines.map((l) => JSON.parse(l) as { level: number; msg: string }).filter((l) => l.level === 40 && /published development key/.test(l.msg) && l.msg.includes(key));

  it('warns at the start and at each reload while it is trusted, with the metric at 1', async () => {
    const lines: string[] = [];
    const g = await fileGateway('swb-dev-key-', doc('https://gw.example.test', DEV_PUBLIC), { logLines: lines });
    try {
      assert.equal(warned(lines, DEV_PUBLIC).length, 1, lines.join('\n'));
      assert.match(warned(lines, DEV_PUBLIC)[0]!.msg, /https:\/\/gw\.example\.test/);
      assert.equal(await gauge(g.app.metricsUrl!), '1');

      g.write(doc('https://gw.example.test', own));
      assert.equal((await g.app.reload()).report.result, 'applied');
      assert.equal(await gauge(g.app.metricsUrl!), '0', 'an own key');

      g.write(doc('https://gw.example.test', pem));
      assert.equal((await g.app.reload()).report.result, 'applied');
      assert.equal(warned(lines, pem).length, 1, 'the reload warns, naming the file that holds the key');
      assert.equal(await gauge(g.app.metricsUrl!), '1');
      assert.equal(warned(lines, DEV_PUBLIC).length, 1, 'one line per start or reload');
    } finally {
      await g.close();
    }
  });

  it('is quiet on loopback (the quick start), the metric at 0', async () => {
    const lines: string[] = [];
    const g = await fileGateway('swb-dev-key-', doc('http://127.0.0.1:8080', DEV_PUBLIC), { logLines: lines });
    try {
      assert.equal(await gauge(g.app.metricsUrl!), '0');
      assert.deepEqual(warned(lines, DEV_PUBLIC), []);
    } finally {
      await g.close();
    }
  });
});

// The same key published by the issuer's key set (auth.jwksUrl) was never examined: a development-key
// token was accepted on a gateway reachable beyond loopback with no warn line and the metric at 0. Now
// each key set fetched is looked at: the warn line (without the URL, which can carry credentials) and
// the metric at 1 once it holds the key, back to 0 on a reload to a key set without it. Found by a
// review. A real key set on a loopback port.
describe('the published development key in the key set of auth.jwksUrl', () => {
  let jwks: http.Server;
  let jwksUrl: string;
  let served: object[];

  before(async () => {
    jwks = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: served })));
    await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', () => r()));
    jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks`;
  });
  after(async () => {
    jwks.closeAllConnections();
    await new Promise<void>((r) => jwks.close(() => r()));
  });

  const remoteDoc = (url: string) => ({ ...doc('https://gw.example.test', DEV_PUBLIC), auth: { mode: 'jwt', issuer: 'https://idp.test', jwksUrl: url, algorithms: ['EdDSA'] } });
  const initialize = async (base: URL, token: string) =>
    (
      await fetch(base, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
      })
    ).status;

  it('says so once a fetched key set holds it, and a token it signed is accepted meanwhile', async () => {
    served = [JSON.parse(readFileSync(DEV_PUBLIC, 'utf8')) as object];
    const lines: string[] = [];
    const g = await fileGateway('swb-dev-key-', remoteDoc(jwksUrl), { logLines: lines });
    try {
      const token = await signDevToken({ keyFile: DEV_PRIVATE, issuer: 'https://idp.test', audience: 'https://gw.example.test', tenant: 'dev', subject: 'anyone', scopes: [], ttlSeconds: 300, tenantClaim: 'tenant' });
      assert.equal(await initialize(g.gw.url(), token), 200, 'what the warning is about: such a token gets in');
      const said = lines.map((l) => JSON.parse(l) as { level: number; msg: string }).filter((l) => l.level === 40 && /published development key/.test(l.msg));
      assert.equal(said.length, 1, lines.join('\n'));
      assert.match(said[0]!.msg, /auth\.jwksUrl/);
      assert.match(said[0]!.msg, /https:\/\/gw\.example\.test/);
      assert.ok(!said[0]!.msg.includes(jwksUrl), 'never the URL: it can carry credentials');
      assert.equal(await gauge(g.app.metricsUrl!), '1');

      // Another key set (another URL: a new set, fetched anew): nothing of the development key is left.
      served = [{ ...(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }) as object), kid: 'own' }];
      g.write(remoteDoc(`${jwksUrl}?v=2`));
      assert.equal((await g.app.reload()).report.result, 'applied');
      assert.equal(await gauge(g.app.metricsUrl!), '0');
      assert.equal(await initialize(g.gw.url(), token), 401);
      assert.equal(await gauge(g.app.metricsUrl!), '0');
    } finally {
      await g.close();
    }
  });

  it("the admin API's own fetch of the key set (its tokens are checked apart from the edge's) says so too", async () => {
    served = [JSON.parse(readFileSync(DEV_PUBLIC, 'utf8')) as object];
    const lines: string[] = [];
    const g = await fileGateway('swb-dev-key-', { ...remoteDoc(`${jwksUrl}?admin`), admin: { enabled: true, host: '127.0.0.1', port: 0 } }, { logLines: lines });
    try {
      assert.equal(await gauge(g.app.metricsUrl!), '0', 'nothing fetched yet');
      const token = await signDevToken({ keyFile: DEV_PRIVATE, issuer: 'https://idp.test', audience: 'https://gw.example.test', tenant: 'dev', subject: 'anyone', scopes: ['switchboard:admin'], ttlSeconds: 300, tenantClaim: 'tenant' });
      assert.equal((await fetch(`${g.app.adminUrl!}/sessions`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
      assert.equal(await gauge(g.app.metricsUrl!), '1');
      assert.equal(lines.filter((l) => /the key set of auth\.jwksUrl holds the published development key/.test(l)).length, 1, lines.join('\n'));
    } finally {
      await g.close();
    }
  });
});
