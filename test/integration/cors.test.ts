// Browsers calling the gateway from an allowed Origin (server.allowedOrigins, or a loopback page such as
// the MCP Inspector's on a loopback gateway): the CORS preflight a browser sends before any MCP request
// (POST with Content-Type application/json, Authorization, Mcp-Session-Id) is answered, and every
// answer to an allowed origin says so and shows the headers an MCP client must read (Mcp-Session-Id,
// WWW-Authenticate). Without them a browser refused the preflight (404) and hid every answer, so the
// origins the config allows could not use the gateway at all. Real HTTP on a loopback port.
import assert from 'node:assert/strict';
import { request, type IncomingHttpHeaders } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { ACCEPT_BOTH, fixtureConfig, initializeBody } from '../helpers/http-edge.js';
import { ISSUER, JwksServer, makeKey, PUBLIC_URL, startJwtFixtureGateway } from '../helpers/tokens.js';

const APP = 'https://app.example.com';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** One request with exactly these headers. A stream (`stream`) is closed once its headers are in. */
function send(gw: RunningGateway, method: string, path: string, headers: Record<string, string>, body?: string, stream = false): Promise<Answer> {
  const u = gw.url(path);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, method, path: u.pathname + u.search, headers: { host: u.host, ...headers } }, (res) => {
      if (stream) {
        resolve({ status: res.statusCode!, headers: res.headers, text: '' });
        req.destroy();
        return;
      }
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      res.on('error', () => {});
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`${method} ${path}: no answer`)));
    req.end(body);
  });
}

function preflight(gw: RunningGateway, path: string, origin: string, method: string, requestHeaders: string): Promise<Answer> {
  return send(gw, 'OPTIONS', path, { origin, 'access-control-request-method': method, 'access-control-request-headers': requestHeaders });
}

function listOf(v: string | string[] | undefined): string[] {
  return String(v ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
}

/** An answer a browser at `origin` may read, showing it the headers an MCP client needs. */
function expectReadable(a: Answer, origin: string): void {
  assert.equal(a.headers['access-control-allow-origin'], origin, `${a.status} ${a.text.slice(0, 200)}`);
  assert.ok(listOf(a.headers.vary).includes('origin'), 'Vary: Origin');
  const exposed = listOf(a.headers['access-control-expose-headers']);
  for (const h of ['mcp-session-id', 'www-authenticate']) assert.ok(exposed.includes(h), `${h} exposed: ${exposed.join(', ')}`);
}

const POST_HEADERS = 'authorization, content-type, mcp-protocol-version, mcp-session-id';

describe('CORS for allowed browser origins (server.allowedOrigins)', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway(fixtureConfig({ allowedOrigins: [APP] }));
  });
  after(async () => {
    await gw?.close();
  });

  it('answers the preflight of a POST on /mcp with 204, the origin, the methods and the headers asked for', async () => {
    const a = await preflight(gw, '/mcp', APP, 'POST', POST_HEADERS);
    assert.equal(a.status, 204, a.text);
    assert.equal(a.headers['access-control-allow-origin'], APP);
    assert.ok(listOf(a.headers.vary).includes('origin'));
    const methods = listOf(a.headers['access-control-allow-methods']);
    for (const m of ['get', 'post', 'delete']) assert.ok(methods.includes(m), `${m} allowed: ${methods.join(', ')}`);
    const allowed = listOf(a.headers['access-control-allow-headers']);
    for (const h of listOf(POST_HEADERS)) assert.ok(allowed.includes(h), `${h} allowed: ${allowed.join(', ')}`);
    assert.ok(Number(a.headers['access-control-max-age']) > 0);
    assert.equal(a.text, '');
  });

  it('a session from the browser: initialize, a call, the GET stream and DELETE are all readable by it', async () => {
    const json = { origin: APP, accept: ACCEPT_BOTH, 'content-type': 'application/json' };
    const init = await send(gw, 'POST', '/mcp', json, JSON.stringify(initializeBody('2025-06-18')));
    assert.equal(init.status, 200, init.text);
    expectReadable(init, APP);
    const sid = String(init.headers['mcp-session-id']);
    const session = { ...json, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
    const note = await send(gw, 'POST', '/mcp', session, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    assert.equal(note.status, 202, note.text);
    expectReadable(note, APP);
    const call = await send(gw, 'POST', '/mcp', session, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }));
    assert.equal(call.status, 200, call.text);
    expectReadable(call, APP);
    const stream = await send(gw, 'GET', '/mcp', { origin: APP, accept: 'text/event-stream', 'mcp-session-id': sid }, undefined, true);
    assert.equal(stream.status, 200, stream.text);
    expectReadable(stream, APP);
    const del = await send(gw, 'DELETE', '/mcp', { origin: APP, 'mcp-session-id': sid });
    assert.equal(del.status, 200, del.text);
    expectReadable(del, APP);
    // A refusal is readable too (here: the session is gone), so the browser's client can show why.
    const gone = await send(gw, 'POST', '/mcp', session, JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }));
    assert.equal(gone.status, 404, gone.text);
    expectReadable(gone, APP);
  });

  it('the legacy HTTP+SSE transport: its preflight and its stream too', async () => {
    const pre = await preflight(gw, '/messages?sessionId=x', APP, 'POST', 'content-type');
    assert.equal(pre.status, 204, pre.text);
    assert.equal(pre.headers['access-control-allow-origin'], APP);
    const stream = await send(gw, 'GET', '/sse', { origin: APP, accept: 'text/event-stream' }, undefined, true);
    assert.equal(stream.status, 200, stream.text);
    expectReadable(stream, APP);
  });

  it('an origin that is not allowed gets 403 to its preflight and no CORS headers anywhere', async () => {
    const pre = await preflight(gw, '/mcp', 'https://evil.example.com', 'POST', POST_HEADERS);
    assert.equal(pre.status, 403, pre.text);
    assert.equal(pre.headers['access-control-allow-origin'], undefined);
    assert.equal(pre.headers['access-control-allow-methods'], undefined);
    const post = await send(gw, 'POST', '/mcp', { origin: 'https://evil.example.com', accept: ACCEPT_BOTH, 'content-type': 'application/json' }, JSON.stringify(initializeBody('2025-06-18')));
    assert.equal(post.status, 403, post.text);
    assert.equal(post.headers['access-control-allow-origin'], undefined);
  });

  it('a request without Origin (not a browser) gets no CORS headers; OPTIONS on a path no endpoint serves stays 404', async () => {
    const init = await send(gw, 'POST', '/mcp', { accept: ACCEPT_BOTH, 'content-type': 'application/json' }, JSON.stringify(initializeBody('2025-06-18')));
    assert.equal(init.status, 200, init.text);
    assert.equal(init.headers['access-control-allow-origin'], undefined);
    const nowhere = await preflight(gw, '/nowhere', APP, 'POST', 'content-type');
    assert.equal(nowhere.status, 404, nowhere.text);
  });
});

describe('CORS for a loopback page on a loopback gateway (the MCP Inspector)', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway(fixtureConfig());
  });
  after(async () => {
    await gw?.close();
  });

  it('answers the Inspector\'s preflight and its initialize', async () => {
    const inspector = 'http://localhost:6274';
    const pre = await preflight(gw, '/mcp', inspector, 'POST', POST_HEADERS);
    assert.equal(pre.status, 204, pre.text);
    assert.equal(pre.headers['access-control-allow-origin'], inspector);
    const init = await send(gw, 'POST', '/mcp', { origin: inspector, accept: ACCEPT_BOTH, 'content-type': 'application/json' }, JSON.stringify(initializeBody('2025-11-25')));
    assert.equal(init.status, 200, init.text);
    expectReadable(init, inspector);
  });
});

describe('CORS for OAuth discovery from a browser (protected resource metadata, auth.mode jwt)', { timeout: 60_000 }, () => {
  let jwks: JwksServer;
  let gw: RunningGateway;
  before(async () => {
    jwks = await JwksServer.start([(await makeKey('cors-k1')).publicJwk]);
    gw = await startJwtFixtureGateway(jwks.url, { publicUrl: PUBLIC_URL, allowedOrigins: [APP] });
  });
  after(async () => {
    await gw?.close();
    await jwks?.close();
  });

  it('the 401 names the metadata, which the browser may fetch (preflight included) and read', async () => {
    const refused = await send(gw, 'POST', '/mcp', { origin: APP, accept: ACCEPT_BOTH, 'content-type': 'application/json' }, JSON.stringify(initializeBody('2025-06-18')));
    assert.equal(refused.status, 401, refused.text);
    expectReadable(refused, APP);
    const named = /resource_metadata="([^"]+)"/.exec(String(refused.headers['www-authenticate']))?.[1];
    assert.ok(named, String(refused.headers['www-authenticate']));
    for (const path of [new URL(named).pathname, '/.well-known/oauth-protected-resource']) {
      // The SDK's discovery sends MCP-Protocol-Version: a header that needs a preflight.
      const pre = await preflight(gw, path, APP, 'GET', 'mcp-protocol-version');
      assert.equal(pre.status, 204, `${path}: ${pre.text}`);
      assert.equal(pre.headers['access-control-allow-origin'], '*', path);
      assert.ok(listOf(pre.headers['access-control-allow-methods']).includes('get'), path);
      assert.ok(listOf(pre.headers['access-control-allow-headers']).includes('mcp-protocol-version'), path);
      const doc = await send(gw, 'GET', path, { origin: APP, 'mcp-protocol-version': '2025-06-18' });
      assert.equal(doc.status, 200, `${path}: ${doc.text}`);
      assert.equal(doc.headers['access-control-allow-origin'], '*', path);
      assert.deepEqual(JSON.parse(doc.text).authorization_servers, [ISSUER]);
    }
  });
});
