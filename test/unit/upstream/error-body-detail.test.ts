// An upstream's error body is quoted to the client (its first 200 characters): never with the gateway's
// own credentials in it, which an echo service or a debug error page sends back.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { Agent } from 'undici';
import { parseConfig } from '../../../src/config/load.js';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import { createLogger } from '../../../src/observability/logger.js';
import { errorBodyDetail } from '../../../src/upstream/error-body-detail.js';
import { StreamableHttpClientTransport } from '../../../src/upstream/streamable-http-client.js';
import { UpstreamPool } from '../../../src/upstream/upstream-pool.js';

const API_KEY = 'sk-live-4f9a8b7c6d5e';
const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJnYXRld2F5In0.c2lnbmF0dXJl';

describe('errorBodyDetail', () => {
  it('redacts configured header values, scheme credentials and JWTs, then cuts to 200 characters', () => {
    const echoed = `{"headers":{"x-api-key":"${API_KEY}","authorization":"Bearer opaque.token-1","x-forwarded":"${JWT}"}}`;
    const d = errorBodyDetail(echoed, { 'x-api-key': API_KEY, 'x-mode': 'json' });
    assert.ok(!d.includes(API_KEY) && !d.includes('opaque.token-1') && !d.includes('eyJzdWIi'), d);
    assert.match(d, /"Bearer \[redacted\]"/);
    assert.equal(errorBodyDetail('x'.repeat(500), undefined).length, 200);
    assert.equal(errorBodyDetail('mode json refused', { 'x-mode': 'json' }), 'mode json refused', 'a short value is no secret');
  });

  it('a secret at the cut leaves no prefix of itself', () => {
    const d = errorBodyDetail(`${'x'.repeat(195)}${API_KEY}`, { k: API_KEY });
    assert.ok(!d.includes('sk-li'), d);
  });
});

describe('a remote upstream echoing the request headers in its error', () => {
  it('tells the client its status and body without the gateway’s API key or token', async () => {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'debug', headers: req.headers })));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    const cfg = parseConfig({ upstreams: [{ name: 'u', transport: 'streamable-http', url, era: 'legacy', headers: { 'x-api-key': API_KEY, authorization: `Bearer ${JWT}` }, healthCheck: { intervalMs: 0 }, restart: { initialDelayMs: 60_000 } }], endpoints: [{ path: '/mcp', upstreams: ['u'] }] }, 'test', {});
    const agent = new Agent();
    const pool = new UpstreamPool(cfg.upstreams[0]!, createLogger('silent'), (u, log) => new StreamableHttpClientTransport(u as RemoteUpstreamConfig, agent, undefined, log));
    try {
      const err = await pool.start().then(() => undefined, (e: Error) => e);
      const inst = [...pool.instances][0]!;
      const said = `${err?.message ?? ''} ${inst.lastFailure ?? ''}`;
      assert.match(said, /HTTP 500/, said);
      assert.ok(!said.includes(API_KEY), said);
      assert.ok(!said.includes(JWT.split('.')[1]!), said);
    } finally {
      await pool.close();
      await agent.close();
      server.closeAllConnections();
      server.close();
    }
  });
});
