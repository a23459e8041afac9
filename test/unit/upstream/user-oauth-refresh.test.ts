// What a refresh the token endpoint does not grant does to a user's link (a real token endpoint on a
// loopback port, the gateway's own consent, vault and log). Only invalid_grant ends the consent: a
// throttled or failing authorization server, or one refusing the gateway's own client (a mistyped secret
// after a reload), used to delete every affected user's link.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import { Agent } from 'undici';
import { parseConfig } from '../../../src/config/load.js';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import type { GatewayError } from '../../../src/errors.js';
import { createLogger } from '../../../src/observability/logger.js';
import { SseClientTransport } from '../../../src/upstream/sse-client.js';
import { StreamableHttpClientTransport } from '../../../src/upstream/streamable-http-client.js';
import { MemoryVaultStore } from '../../../src/upstream/vault-store.js';
import { ALICE, consentRig, startTokenEndpoint, type Rig, type TokenAnswer, type TokenEndpoint } from '../../helpers/refresh-rig.js';

describe('a refresh the token endpoint does not grant', () => {
  let endpoint: TokenEndpoint;
  let next: TokenAnswer;
  let rig: Rig;
  before(async () => {
    endpoint = await startTokenEndpoint(() => next);
  });
  after(() => endpoint.close());
  afterEach(() => rig?.close());

  /** Alice's link, her access token expired (expired: true) or only within the refresh skew. */
  const linked = async (o: { expired: boolean }) => {
    rig = consentRig(endpoint.url, new MemoryVaultStore());
    await rig.vault.save('tickets', ALICE, { accessToken: 'at-1', refreshToken: 'rt-1', expiresAt: Date.now() + (o.expired ? -1000 : 5000) });
  };
  const failure = (p: Promise<unknown>) => p.then((v) => assert.fail(`expected a failure, got ${String(v)}`), (e: unknown) => e as GatewayError);

  for (const [what, answer] of [
    ['429 (throttled)', { status: 429, body: { error: 'slow_down' } }],
    ['429 without a body', { status: 429, body: '' }],
    ['503', { status: 503, body: { error: 'temporarily_unavailable' } }],
  ] as const) {
    it(`${what}: retry later (SWB_UPSTREAM_UNAVAILABLE); the link stays`, async () => {
      await linked({ expired: true });
      next = answer;
      const err = await failure(rig.credential().token());
      assert.equal(err.code, 'SWB_UPSTREAM_UNAVAILABLE', err.message);
      assert.equal((await rig.vault.load('tickets', ALICE))?.refreshToken, 'rt-1', 'the link is kept');
      // Once the server answers again, the same link refreshes.
      next = { status: 200, body: { access_token: 'at-2', token_type: 'Bearer', expires_in: 3600 } };
      assert.equal(await rig.credential().token(), 'at-2');
    });
  }

  it('429 while the stored token is still valid (within the refresh skew): the stored token is used; the link stays', async () => {
    await linked({ expired: false });
    next = { status: 429, body: { error: 'slow_down' } };
    assert.equal(await rig.credential().token(), 'at-1');
    assert.equal((await rig.vault.load('tickets', ALICE))?.refreshToken, 'rt-1');
  });

  // Each call in the refresh skew sent its own refresh and waited for its answer (an authorization server
  // down: up to its timeouts, on every call of every user) before using the token still held, and a refused
  // client logged an error per call. As the other renewed tokens (RenewedToken) it now waits a while.
  for (const [what, answer] of [
    ['503', { status: 503, body: { error: 'temporarily_unavailable' } }],
    ['invalid_client', { status: 401, body: { error: 'invalid_client' } }],
  ] as const) {
    it(`${what} while the stored token is still valid: the calls right after use it without asking again`, async () => {
      await linked({ expired: false });
      next = answer;
      const credential = rig.credential();
      const before = endpoint.forms.length;
      for (let i = 0; i < 3; i++) assert.equal(await credential.token(), 'at-1');
      assert.equal(endpoint.forms.length - before, 1, 'one refresh request for three calls');
      assert.equal(rig.logs.filter((l) => l.level === 50).length, answer.status === 401 ? 1 : 0, 'at most one error line');
    });
  }

  for (const [what, answer] of [
    ['invalid_client (the gateway’s secret is wrong)', { status: 401, body: { error: 'invalid_client', error_description: 'client authentication failed' } }],
    ['invalid_request', { status: 400, body: { error: 'invalid_request' } }],
    ['a 403 with no OAuth error', { status: 403, body: '<html>forbidden</html>' }],
  ] as const) {
    it(`${what}: the gateway's configuration is refused (SWB_UPSTREAM_CREDENTIAL_REFUSED, logged as an error); the link stays`, async () => {
      await linked({ expired: true });
      next = answer;
      const err = await failure(rig.credential().token());
      assert.equal(err.code, 'SWB_UPSTREAM_CREDENTIAL_REFUSED', err.message);
      const reason = typeof answer.body === 'object' ? answer.body.error : `HTTP ${answer.status}`;
      assert.equal(err.details?.reason, reason);
      assert.match(err.message, /link is kept/);
      assert.equal((await rig.vault.load('tickets', ALICE))?.refreshToken, 'rt-1', 'the link is kept');
      const line = rig.logs.find((l) => l.reason === reason);
      assert.ok(line, `a log line names ${reason}`);
      assert.equal(line.level, 50, 'at error level: an operator must act');
      assert.doesNotMatch(JSON.stringify(rig.logs), /rt-1|at-1|s3cret/, 'no token or secret in the log');
    });
  }

  it('invalid_grant while the stored token is still valid: the consent ended, the link goes', async () => {
    await linked({ expired: false });
    next = { status: 400, body: { error: 'invalid_grant' } };
    const err = await failure(rig.credential().token());
    assert.equal(err.code, 'SWB_UPSTREAM_CONSENT_REQUIRED');
    assert.equal(err.details?.reason, 'expired');
    assert.equal(await rig.vault.load('tickets', ALICE), undefined, 'the link is deleted');
  });
});

// An upstream 401 refreshes the token it refused, not whatever the vault holds by then: another replica
// refused the same token may have refreshed it already, and its fresh token was refreshed again (an
// extra rotation, which feeds the refresh race). The upstream here plays that replica: refused at-1, it
// stores at-2 before answering 401.
describe('an upstream 401 refreshes only the token it refused', () => {
  let endpoint: TokenEndpoint;
  let upstream: Server;
  let upstreamUrl: string;
  const bearers: string[] = [];
  let rig: Rig;
  const agent = new Agent();
  before(async () => {
    endpoint = await startTokenEndpoint(() => ({ status: 200, body: { access_token: `at-refreshed-${endpoint.forms.length}`, token_type: 'Bearer', expires_in: 3600, refresh_token: `rt-refreshed-${endpoint.forms.length}` } }));
    upstream = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', async () => {
        const bearer = (req.headers.authorization ?? '').replace(/^Bearer /, '');
        bearers.push(bearer);
        if (bearer === 'at-1') {
          await rig.vault.update('tickets', ALICE, (await rig.vault.loadLink('tickets', ALICE))!, { accessToken: 'at-2', refreshToken: 'rt-2', expiresAt: Date.now() + 3_600_000 });
          res.writeHead(401).end();
        } else if (req.method === 'GET') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.end(`event: endpoint\ndata: ${upstreamUrl}\n\n`);
        } else {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id: (JSON.parse(body) as { id: number }).id, result: {} }));
        }
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`;
  });
  after(async () => {
    await agent.close();
    await new Promise((resolve) => upstream.close(resolve));
    await endpoint.close();
  });
  afterEach(() => rig?.close());

  const setUp = async () => {
    rig = consentRig(endpoint.url, new MemoryVaultStore());
    await rig.vault.save('tickets', ALICE, { accessToken: 'at-1', refreshToken: 'rt-1', expiresAt: Date.now() + 3_600_000 });
    bearers.length = 0;
    endpoint.forms.length = 0;
    const cfg = parseConfig({ upstreams: [{ name: 'tickets', transport: 'streamable-http', url: upstreamUrl }], endpoints: [{ path: '/mcp', upstreams: ['tickets'] }] });
    return { cfg: cfg.upstreams[0] as RemoteUpstreamConfig, credential: rig.credential() };
  };

  it('the credential itself: the refused token, replaced meanwhile, is not refreshed; a refused token still stored is', async () => {
    const { credential } = await setUp();
    assert.equal(await credential.token(), 'at-1');
    await rig.vault.update('tickets', ALICE, (await rig.vault.loadLink('tickets', ALICE))!, { accessToken: 'at-2', refreshToken: 'rt-2', expiresAt: Date.now() + 3_600_000 });
    credential.invalidate('at-1');
    assert.equal(await credential.token(), 'at-2');
    assert.equal(endpoint.forms.length, 0, 'no refresh');
    credential.invalidate('at-2');
    assert.equal(await credential.token(), 'at-refreshed-1');
    assert.equal(endpoint.forms[0]?.get('refresh_token'), 'rt-2');
  });

  it('Streamable HTTP: the retry after the 401 carries the token another replica stored, with no refresh', async () => {
    const { cfg, credential } = await setUp();
    const t = new StreamableHttpClientTransport(cfg, agent, credential, createLogger('silent'));
    const answered = new Promise((resolve) => (t.onmessage = resolve));
    await t.start();
    await t.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    assert.deepEqual(await answered, { jsonrpc: '2.0', id: 1, result: {} });
    assert.deepEqual(bearers, ['at-1', 'at-2']);
    assert.equal(endpoint.forms.length, 0, 'no refresh');
    await t.close();
  });

  it('legacy SSE: the next start after the 401 carries the token another replica stored, with no refresh', async () => {
    const { cfg, credential } = await setUp();
    const sse = { ...cfg, transport: 'sse' } as RemoteUpstreamConfig;
    const first = new SseClientTransport(sse, agent, credential, createLogger('silent'));
    await assert.rejects(first.start(), /401/);
    const second = new SseClientTransport(sse, agent, credential, createLogger('silent'));
    await second.start();
    assert.deepEqual(bearers, ['at-1', 'at-2']);
    assert.equal(endpoint.forms.length, 0, 'no refresh');
    await second.close();
  });
});
