// Nothing said so when auth.keys trusted the published development key (deploy/dev-keys, whose private
// half ships with Switchboard: anyone can sign tokens with it, for any tenant and scope, the admin scope
// included) on a gateway reachable beyond loopback (a non-loopback server.host or server.publicUrl). Now
// the start and every reload write a warn line naming the key file, and
// switchboard_auth_development_key_exposed reads 1 while it is so. The quick start (loopback) stays
// quiet. Found by a review. Real gateway from a real file, reloaded.
import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileGateway } from '../helpers/file-gateway.js';
import { FIXTURE } from '../helpers/gateway.js';

const DEV_PUBLIC = join(import.meta.dirname, '..', '..', 'deploy', 'dev-keys', 'dev-public.jwk.json');

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
