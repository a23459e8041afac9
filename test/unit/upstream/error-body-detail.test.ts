// An upstream's error body is quoted to the client (its first 200 characters): never with the gateway's
// own credentials in it, which an echo service or a debug error page sends back.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { Agent } from 'undici';
import { parseConfig } from '../../../src/config/load.js';
import { META_VERSION } from '../../../src/jsonrpc/modern-meta.js';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import { createLogger } from '../../../src/observability/logger.js';
import { ClientCredentials } from '../../../src/upstream/client-credentials.js';
import { errorBodyDetail } from '../../../src/upstream/error-body-detail.js';
import { keepSentCredentials, refusalWithoutCredentials } from '../../../src/upstream/sent-credentials.js';
import { SseClientTransport } from '../../../src/upstream/sse-client.js';
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

  it('redacts the Authorization the request carried, and its credentials echoed alone', () => {
    const token = 'gho_16C7e42F292c6912E7710c838347Ae178B4a';
    const d = errorBodyDetail(`invalid token: ${token} ("access_token":"${token}")`, undefined, `Bearer ${token}`);
    assert.equal(d, 'invalid token: [redacted] ("access_token":"[redacted]")');
    const stat = errorBodyDetail('key=opaque-static-key refused', { Authorization: 'Token opaque-static-key' });
    assert.equal(stat, 'key=[redacted] refused', 'a static Authorization echoed without its scheme');
  });

  it('redacts HTTP Basic credentials echoed decoded: the pair, and the secret alone as sent and form-decoded', () => {
    const secret = 's3cret/with+chars';
    const sent = `Basic ${Buffer.from(`switchboard:${encodeURIComponent(secret)}`).toString('base64')}`;
    const d = errorBodyDetail(`bad client switchboard:${encodeURIComponent(secret)}; secret ${encodeURIComponent(secret)} or ${secret}`, undefined, sent);
    assert.equal(d, 'bad client [redacted]; secret [redacted] or [redacted]');
    const configured = errorBodyDetail(`refused switchboard:${secret}`, { Authorization: `Basic ${Buffer.from(`switchboard:${secret}`).toString('base64')}` });
    assert.equal(configured, 'refused [redacted]', 'a static Basic Authorization echoed decoded');
    // A 2026-07-28 refusal's JSON body, relayed as it is: its decoded echo blanked too, the JSON intact.
    const res = { statusCode: 401 };
    keepSentCredentials(res, { authorization: sent });
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32001, message: `client switchboard:${secret} refused` } });
    const relayed = refusalWithoutCredentials(res, body, undefined);
    assert.equal((JSON.parse(relayed) as { error: { message: string } }).error.message, 'client [redacted] refused');
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

describe('a remote upstream echoing the opaque token it was sent in its refusal (found by a review)', () => {
  // The shared client-credentials token: an opaque one (GitHub's style), which no pattern finds.
  const TOKEN = `gho_${'16C7e42F292c6912E7710c838347Ae178B4a'}`;
  const refusal = (res: import('node:http').ServerResponse, bearer: string) =>
    res.writeHead(403, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `invalid token: ${bearer}`, access_token: bearer }));
  const tokens = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: TOKEN, token_type: 'Bearer', expires_in: 3600 }));
  });
  const upstream = createServer((req, res) => {
    const bearer = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      // A 2026-07-28 refusal: a 4xx whose body is the JSON-RPC error, relayed to the client as it is.
      if (req.url === '/modern') {
        const id = (JSON.parse(body) as { id: unknown }).id;
        return void res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32602, message: `invalid token: ${bearer}`, data: { token: bearer } } }));
      }
      if (req.method === 'GET' && req.url === '/sse') return void res.writeHead(200, { 'content-type': 'text/event-stream' }).write('event: endpoint\ndata: /messages\n\n');
      refusal(res, bearer);
    });
  });
  const agent = new Agent();
  let base = '';
  let tokenUrl = '';

  before(async () => {
    for (const s of [tokens, upstream]) s.listen(0, '127.0.0.1');
    await Promise.all([once(tokens, 'listening'), once(upstream, 'listening')]);
    tokenUrl = `http://127.0.0.1:${(tokens.address() as AddressInfo).port}/token`;
    base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  });
  after(async () => {
    await agent.close();
    for (const s of [tokens, upstream]) {
      s.closeAllConnections();
      s.close();
    }
  });

  const configOf = (transport: 'streamable-http' | 'sse', url: string) => {
    const auth = { type: 'client-credentials', tokenUrl, clientId: 'gw', clientSecret: 'secret-of-the-gateway' };
    const cfg = parseConfig({ upstreams: [{ name: 'u', transport, url, auth }], endpoints: [{ path: '/mcp', upstreams: ['u'] }] }, 'test', {}).upstreams[0] as RemoteUpstreamConfig;
    if (cfg.auth?.type !== 'client-credentials') throw new Error('config');
    return { cfg, credentials: new ClientCredentials(cfg.auth, agent, cfg.http.bodyTimeoutMs) };
  };
  const initialize = { jsonrpc: '2.0' as const, id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };

  it('over Streamable HTTP: the refusal is quoted, the token is not', async () => {
    const { cfg, credentials } = configOf('streamable-http', `${base}/mcp`);
    const t = new StreamableHttpClientTransport(cfg, agent, credentials, createLogger('silent'));
    try {
      const err = await t.send(initialize).then(() => undefined, (e: Error) => e);
      assert.match(err?.message ?? '', /HTTP 403.*invalid token: \[redacted\]/, err?.message);
      assert.ok(!err!.message.includes(TOKEN.slice(4, 16)), err!.message);
    } finally {
      await t.close();
    }
  });

  it('a JSON-RPC error in a 4xx body (how a 2026-07-28 upstream refuses): relayed, the token blanked', async () => {
    const { cfg, credentials } = configOf('streamable-http', `${base}/modern`);
    const t = new StreamableHttpClientTransport(cfg, agent, credentials, createLogger('silent'));
    const answers: unknown[] = [];
    t.onmessage = (m) => void answers.push(m);
    try {
      await t.send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { [META_VERSION]: '2026-07-28' } } });
      assert.deepEqual(answers, [{ jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'invalid token: [redacted]', data: { token: '[redacted]' } } }]);
    } finally {
      await t.close();
    }
  });

  it('over HTTP+SSE: a refused POST is quoted, the token is not', async () => {
    const { cfg, credentials } = configOf('sse', `${base}/sse`);
    const t = new SseClientTransport(cfg, agent, credentials, createLogger('silent'));
    try {
      await t.start();
      const err = await t.send(initialize).then(() => undefined, (e: Error) => e);
      assert.match(err?.message ?? '', /HTTP 403.*invalid token: \[redacted\]/, err?.message);
      assert.ok(!err!.message.includes(TOKEN.slice(4, 16)), err!.message);
    } finally {
      await t.close();
    }
  });
});
