// Edge behaviour that needs no socket: status codes, headers and JSON-RPC error bodies for bad Accept,
// bad Content-Type, missing or unknown sessions, 405s, the Origin/Host guard, bodies over the limit,
// parse errors and batch rules, on both HTTP edges. Every request goes through fastify.inject() into a
// gateway that never listens (the conformance fixture behind it, started on first use), so these run
// in milliseconds; test/integration/http-edge.test.ts keeps what needs real streams and real sockets.
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import {
  ACCEPT_BOTH,
  VISIBLE_ASCII,
  expectRpcError,
  expectRpcErrorObject,
  fixtureConfig,
  initializeBody,
  injectGateway,
  openSession,
  post,
  type InjectedGateway,
  type Json,
  type Session,
} from '../helpers/http-edge.js';

interface RawReply {
  status: number;
  headers: Record<string, string | undefined>;
  text: string;
}

/** A request with full control over its headers (Host included), answered as status, headers, text. */
async function rawRequest(gw: InjectedGateway, o: { method: string; path?: string; headers?: Record<string, string>; body?: string }): Promise<RawReply> {
  const res = await gw.fetch(gw.url(o.path ?? '/mcp'), { method: o.method, headers: o.headers, body: o.body });
  return { status: res.status, headers: Object.fromEntries(res.headers), text: await res.text() };
}

function expectRawRpcError(r: RawReply, status: number, code?: number): Json {
  assert.equal(r.status, status, r.text);
  assert.match(String(r.headers['content-type'] ?? ''), /^application\/json/);
  const body = JSON.parse(r.text) as Json;
  expectRpcErrorObject(body, null, code);
  return body;
}

const HOST_HEADERS = (gw: InjectedGateway) => ({ host: gw.url().host });

/** GET on the Streamable HTTP endpoint (only refusals here: an inject never ends for a stream). */
async function getStream(gw: InjectedGateway, headers: Record<string, string>): Promise<{ res: Response; ac: AbortController }> {
  return { res: await gw.fetch(gw.url('/mcp'), { method: 'GET', headers }), ac: new AbortController() };
}

// ---------------------------------------------------------------------------------------------------
// Streamable HTTP
// ---------------------------------------------------------------------------------------------------

describe('Streamable HTTP edge rules (inject)', () => {
  let gw: InjectedGateway;

  before(async () => {
    gw = await injectGateway(fixtureConfig({ maxBodyBytes: 2048, maxBatchMessages: 3 }));
  });
  after(async () => {
    await gw?.close();
  });

  describe('initialize', () => {
    it('refuses initialize inside a batch with 400', async () => {
      const res = await post(gw, [initializeBody('2025-03-26', 9), { jsonrpc: '2.0', id: 10, method: 'ping' }]);
      await expectRpcError(res, 400, { code: -32600, id: 9 });
      assert.equal(res.headers.get('mcp-session-id'), null);
    });

    it('refuses initialize that carries an Mcp-Session-Id with 400', async () => {
      const s = await openSession(gw);
      const res = await post(gw, initializeBody('2025-11-25', 11), { sid: s.sid });
      await expectRpcError(res, 400, { code: -32600, id: 11 });
    });
  });

  describe('sessions', () => {
    it('refuses a non-initialize POST without Mcp-Session-Id with 400', async () => {
      const res = await post(gw, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
      // Every refusal carries the request id when it could be read (issue 14).
      await expectRpcError(res, 400, { code: -32600, id: 1 });
    });

    it('answers an unknown session id with 404', async () => {
      const res = await post(gw, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { sid: 'no-such-session', version: '2025-11-25' });
      await expectRpcError(res, 404, { code: -32600, id: 1 });
    });

    it('DELETE ends the session (200); afterwards POST, GET and DELETE get 404', async () => {
      const s = await openSession(gw);
      const del = await gw.fetch(gw.url('/mcp'), { method: 'DELETE', headers: { 'mcp-session-id': s.sid, 'mcp-protocol-version': s.version }, signal: AbortSignal.timeout(10_000) });
      await del.text();
      assert.equal(del.status, 200);
      const res = await post(gw, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { sid: s.sid, version: s.version });
      await expectRpcError(res, 404, { code: -32600, id: 2 });
      const { res: get } = await getStream(gw, { accept: 'text/event-stream', 'mcp-session-id': s.sid });
      await expectRpcError(get, 404, { code: -32600 });
      const del2 = await gw.fetch(gw.url('/mcp'), { method: 'DELETE', headers: { 'mcp-session-id': s.sid }, signal: AbortSignal.timeout(10_000) });
      await expectRpcError(del2, 404, { code: -32600 });
    });

    it('DELETE without a session id gets 400', async () => {
      const del = await gw.fetch(gw.url('/mcp'), { method: 'DELETE', signal: AbortSignal.timeout(10_000) });
      await expectRpcError(del, 400, { code: -32600 });
    });

    it('refuses an unsupported MCP-Protocol-Version header with 400', async () => {
      const s = await openSession(gw);
      const res = await post(gw, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, { sid: s.sid, version: '1999-01-01' });
      await expectRpcError(res, 400, { code: -32600, id: 3 });
      // One that is no revision at all is the same (found by a review): compared as text, "garbage" came
      // after every 2025 revision and was served as a 2026-07-28 request (-32020, a header required).
      for (const version of ['garbage', 'v2', '2025-11-25x']) {
        const bad = await post(gw, { jsonrpc: '2.0', id: 4, method: 'tools/list' }, { sid: s.sid, version });
        await expectRpcError(bad, 400, { code: -32600, id: 4 });
      }
    });
  });

  describe('request validation', () => {
    let s: Session;
    before(async () => {
      s = await openSession(gw, '2025-06-18');
    });

    it('406 when Accept lacks text/event-stream', async () => {
      const res = await post(gw, { jsonrpc: '2.0', id: 1, method: 'ping' }, { sid: s.sid, version: s.version, accept: 'application/json' });
      await expectRpcError(res, 406);
    });

    it('406 when Accept names JSON only as a look-alike or with q=0', async () => {
      for (const accept of ['application/json-seq, text/event-stream', 'application/json;q=0, text/event-stream', '*/*, text/event-stream;q=0']) {
        const res = await post(gw, { jsonrpc: '2.0', id: 1, method: 'ping' }, { sid: s.sid, version: s.version, accept });
        await expectRpcError(res, 406);
      }
    });

    it('406 when Accept is missing', async () => {
      // fetch would add "Accept: */*"; node:http sends no Accept at all.
      const r = await rawRequest(gw, {
        method: 'POST',
        headers: { ...HOST_HEADERS(gw), 'content-type': 'application/json', 'mcp-session-id': s.sid, 'mcp-protocol-version': s.version },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
      expectRawRpcError(r, 406);
    });

    it('415 for Content-Type text/plain', async () => {
      const res = await post(gw, { jsonrpc: '2.0', id: 1, method: 'ping' }, { sid: s.sid, version: s.version, contentType: 'text/plain' });
      await expectRpcError(res, 415);
    });

    it('415 naming the coding for a gzip-compressed body (Content-Encoding is not decoded), with Accept-Encoding: identity', async () => {
      const body = gzipSync(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }));
      const res = await gw.fetch(gw.url('/mcp'), {
        method: 'POST',
        headers: { ...HOST_HEADERS(gw), accept: ACCEPT_BOTH, 'content-type': 'application/json', 'content-encoding': 'gzip', 'mcp-session-id': s.sid, 'mcp-protocol-version': s.version },
        body,
      });
      assert.equal(res.headers.get('accept-encoding'), 'identity');
      const err = await expectRpcError(res, 415);
      assert.match(err.error.message, /Content-Encoding gzip/);
    });

    it('413 for a body over server.maxBodyBytes (2048)', async () => {
      const big = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'test_simple_text', arguments: { pad: 'x'.repeat(4096) } } };
      const res = await post(gw, big, { sid: s.sid, version: s.version });
      await expectRpcError(res, 413, { code: -32600 });
    });

    it('400 / -32700 / id null for malformed JSON', async () => {
      const res = await post(gw, '{"jsonrpc":"2.0","id":1,"method":', { sid: s.sid, version: s.version });
      await expectRpcError(res, 400, { code: -32700, id: null });
    });

    it('400 / -32600 for jsonrpc "1.0" (the readable id is echoed)', async () => {
      const res = await post(gw, { jsonrpc: '1.0', id: 5, method: 'ping' }, { sid: s.sid, version: s.version });
      await expectRpcError(res, 400, { code: -32600, id: 5 });
    });

    it('400 / -32600 / id null for a message with neither method nor id', async () => {
      const res = await post(gw, { jsonrpc: '2.0', params: {} }, { sid: s.sid, version: s.version });
      await expectRpcError(res, 400, { code: -32600, id: null });
    });

    it('400 / -32600 for params given as an array', async () => {
      const res = await post(gw, { jsonrpc: '2.0', id: 'arr', method: 'tools/list', params: [] }, { sid: s.sid, version: s.version });
      await expectRpcError(res, 400, { code: -32600, id: 'arr' });
    });

    it('400 / -32600 for a JSON value that is not an object', async () => {
      const res = await post(gw, '42', { sid: s.sid, version: s.version });
      await expectRpcError(res, 400, { code: -32600, id: null });
    });

    it('400 / -32600 for an empty batch', async () => {
      const res = await post(gw, [], { sid: s.sid, version: s.version });
      await expectRpcError(res, 400, { code: -32600, id: null });
    });

    it('400 / -32600 for a batch on a session negotiated at 2025-06-18', async () => {
      const res = await post(gw, [{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 2, method: 'ping' }], { sid: s.sid, version: s.version });
      await expectRpcError(res, 400, { code: -32600, id: 1 }); // the first request's id: every refusal carries one when it can be read
    });

    it('400 / -32600 for a 2025-03-26 batch longer than server.maxBatchMessages (3); one of 3 is answered', async () => {
      const s25 = await openSession(gw, '2025-03-26');
      const pings = (n: number) => Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: `p${i}`, method: 'ping' }));
      const refused = await expectRpcError(await post(gw, pings(4), { sid: s25.sid }), 400, { code: -32600, id: null });
      assert.match(String(refused.error.message), /a batch of 4 messages; at most 3 per POST/);
      const res = await post(gw, pings(3), { sid: s25.sid });
      const text = await res.text();
      assert.equal(res.status, 200, text);
      const answers = (text.startsWith('[') ? JSON.parse(text) : text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)))) as Json[];
      assert.deepEqual(answers.map((a) => a.id).sort(), ['p0', 'p1', 'p2']);
    });

    it('405 with an Allow header for PUT', async () => {
      const res = await gw.fetch(gw.url('/mcp'), { method: 'PUT', headers: { 'content-type': 'application/json', 'mcp-session-id': s.sid }, body: '{}', signal: AbortSignal.timeout(10_000) });
      const allow = res.headers.get('allow') ?? '';
      await expectRpcError(res, 405);
      for (const m of ['GET', 'POST', 'DELETE']) assert.ok(allow.includes(m), `Allow "${allow}" lists ${m}`);
    });
  });

  describe('GET stream', () => {
    it('GET without a session id gets 400', async () => {
      const { res, ac } = await getStream(gw, { accept: 'text/event-stream' });
      try {
        await expectRpcError(res, 400, { code: -32600 });
      } finally {
        ac.abort();
      }
    });

    it('GET with Accept: application/json only gets 406', async () => {
      await expectGetRefused({ accept: 'application/json' }, 406);
    });

    it('GET with a Last-Event-ID naming no stream of the session gets 400', async () => {
      await expectGetRefused({ accept: 'text/event-stream', 'last-event-id': '999_0' }, 400, { code: -32600 });
    });

    it('GET with a malformed Last-Event-ID gets 400', async () => {
      await expectGetRefused({ accept: 'text/event-stream', 'last-event-id': 'garbage' }, 400, { code: -32600 });
    });

    /** Opens a session, sends a GET with these extra headers, and expects a refusal. */
    async function expectGetRefused(headers: Record<string, string>, status: number, rpc?: { code: number }): Promise<void> {
      const s = await openSession(gw);
      const { res, ac } = await getStream(gw, { 'mcp-session-id': s.sid, 'mcp-protocol-version': s.version, ...headers });
      try {
        await (rpc ? expectRpcError(res, status, rpc) : expectRpcError(res, status));
      } finally {
        ac.abort();
      }
    }
  });

  describe('Origin and Host validation (gateway bound to loopback)', () => {
    it('Origin http://evil.example.com gets 403', async () => {
      const r = await rawRequest(gw, {
        method: 'POST',
        headers: { ...HOST_HEADERS(gw), origin: 'http://evil.example.com', accept: ACCEPT_BOTH, 'content-type': 'application/json' },
        body: JSON.stringify(initializeBody('2025-11-25')),
      });
      expectRawRpcError(r, 403);
      assert.equal(r.headers['mcp-session-id'], undefined, 'no session is created');
    });

    it('Host evil.example.com gets 403 (DNS rebinding)', async () => {
      const r = await rawRequest(gw, {
        method: 'POST',
        headers: { host: 'evil.example.com', accept: ACCEPT_BOTH, 'content-type': 'application/json' },
        body: JSON.stringify(initializeBody('2025-11-25')),
      });
      expectRawRpcError(r, 403);
    });

    it('Host evil.example.com with the gateway port gets 403 on GET and DELETE too', async () => {
      const host = `evil.example.com:${gw.url().port}`;
      const g = await rawRequest(gw, { method: 'GET', headers: { host, accept: 'text/event-stream', 'mcp-session-id': 'x' } });
      expectRawRpcError(g, 403);
      const d = await rawRequest(gw, { method: 'DELETE', headers: { host, 'mcp-session-id': 'x' } });
      expectRawRpcError(d, 403);
    });

    it('Origin http://localhost:6274 (a local tool such as the Inspector) is allowed', async () => {
      const r = await rawRequest(gw, {
        method: 'POST',
        headers: { ...HOST_HEADERS(gw), origin: 'http://localhost:6274', accept: ACCEPT_BOTH, 'content-type': 'application/json' },
        body: JSON.stringify(initializeBody('2025-11-25')),
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(JSON.parse(r.text).result.serverInfo.name, 'switchboard');
      assert.match(String(r.headers['mcp-session-id']), VISIBLE_ASCII);
    });

    it('Host localhost:<port> is allowed', async () => {
      const r = await rawRequest(gw, {
        method: 'POST',
        headers: { host: `localhost:${gw.url().port}`, accept: ACCEPT_BOTH, 'content-type': 'application/json' },
        body: JSON.stringify(initializeBody('2025-11-25')),
      });
      assert.equal(r.status, 200, r.text);
    });
  });
});

describe('Streamable HTTP edge rules with server.responseMode: json (inject)', () => {
  let gw: InjectedGateway;
  before(async () => {
    gw = await injectGateway(fixtureConfig({ responseMode: 'json' }));
  });
  after(async () => {
    await gw?.close();
  });

  it('still refuses malformed JSON with 400 / -32700', async () => {
    const s = await openSession(gw);
    const res = await post(gw, 'not json', { sid: s.sid, version: s.version });
    await expectRpcError(res, 400, { code: -32700, id: null });
  });
});

describe('Streamable HTTP edge rules with server.allowedOrigins (inject)', () => {
  let gw: InjectedGateway;
  before(async () => {
    gw = await injectGateway(fixtureConfig({ allowedOrigins: ['https://app.example.com'] }));
  });
  after(async () => {
    await gw?.close();
  });

  const initWithOrigin = (origin: string) =>
    rawRequest(gw, {
      method: 'POST',
      headers: { ...HOST_HEADERS(gw), origin, accept: ACCEPT_BOTH, 'content-type': 'application/json' },
      body: JSON.stringify(initializeBody('2025-11-25')),
    });

  it('allows the configured origin', async () => {
    const r = await initWithOrigin('https://app.example.com');
    assert.equal(r.status, 200, r.text);
    assert.equal(JSON.parse(r.text).result.serverInfo.name, 'switchboard');
  });

  it('refuses a loopback origin that is not listed (http://localhost:1234) with 403', async () => {
    expectRawRpcError(await initWithOrigin('http://localhost:1234'), 403);
  });

  it('refuses http://evil.example.com with 403', async () => {
    expectRawRpcError(await initWithOrigin('http://evil.example.com'), 403);
  });

  it('still accepts a request without Origin (a non-browser client)', async () => {
    const res = await post(gw, initializeBody('2025-11-25'));
    await res.text();
    assert.equal(res.status, 200);
  });
});

// ---------------------------------------------------------------------------------------------------
// Legacy HTTP+SSE
// ---------------------------------------------------------------------------------------------------

describe('legacy HTTP+SSE edge rules (inject)', () => {
  let gw: InjectedGateway;
  before(async () => {
    gw = await injectGateway(fixtureConfig());
  });
  after(async () => {
    await gw?.close();
  });

  function postLegacy(path: string, body: unknown, contentType = 'application/json'): Promise<Response> {
    return gw.fetch(gw.url(path), {
      method: 'POST',
      headers: { 'content-type': contentType },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  }

  it('a batch over the default server.maxBatchMessages (100) gets 400 / -32600 before its session is looked up', async () => {
    const pings = Array.from({ length: 101 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' }));
    const body = await expectRpcError(await postLegacy('/messages?sessionId=no-such-session', pings), 400, { code: -32600, id: null });
    assert.match(String(body.error.message), /a batch of 101 messages; at most 100 per POST \(server\.maxBatchMessages\)/);
  });

  it('POST with an unknown sessionId gets 404', async () => {
    const res = await postLegacy('/messages?sessionId=no-such-session', { jsonrpc: '2.0', id: 1, method: 'ping' });
    await expectRpcError(res, 404, { code: -32600 });
  });

  it('POST without sessionId gets 400', async () => {
    const res = await postLegacy('/messages', { jsonrpc: '2.0', id: 1, method: 'ping' });
    await expectRpcError(res, 400, { code: -32600 });
  });

  it('GET /sse with Origin http://evil.example.com gets 403', async () => {
    const r = await rawRequest(gw, { method: 'GET', path: '/sse', headers: { ...HOST_HEADERS(gw), origin: 'http://evil.example.com', accept: 'text/event-stream' } });
    expectRawRpcError(r, 403);
  });

  it('a method the legacy path does not serve gets 405 naming the one it does (POST /sse, GET and DELETE /messages, HEAD /sse)', async () => {
    const cases: Array<[string, string, string]> = [
      ['POST', '/sse', 'GET'],
      ['PUT', '/sse', 'GET'],
      ['HEAD', '/sse', 'GET'],
      ['GET', '/messages?sessionId=x', 'POST'],
      ['DELETE', '/messages?sessionId=x', 'POST'],
    ];
    for (const [method, path, allow] of cases) {
      const r = await rawRequest(gw, { method, path, headers: { ...HOST_HEADERS(gw), accept: ACCEPT_BOTH, 'content-type': 'application/json' }, body: method === 'POST' || method === 'PUT' ? JSON.stringify(initializeBody('2024-11-05')) : undefined });
      assert.equal(r.status, 405, `${method} ${path}: ${r.text}`);
      assert.equal(r.headers.allow, allow, `${method} ${path}`);
      if (method !== 'HEAD') expectRawRpcError(r, 405);
    }
  });

  it('a preflight of a legacy path names the method that path serves', async () => {
    const origin = 'http://localhost:6274';
    for (const [path, allow] of [['/sse', 'GET'], ['/messages', 'POST']] as const) {
      const r = await rawRequest(gw, { method: 'OPTIONS', path, headers: { ...HOST_HEADERS(gw), origin, 'access-control-request-method': allow } });
      assert.equal(r.status, 204, r.text);
      assert.equal(r.headers['access-control-allow-methods'], allow, path);
      assert.equal(r.headers.allow, allow, path);
    }
  });

  it('a Streamable HTTP session id is not a legacy session: POST /messages with it gets 404', async () => {
    const res = await post(gw, initializeBody('2025-11-25'));
    await res.text();
    const sid = res.headers.get('mcp-session-id')!;
    const r = await postLegacy(`/messages?sessionId=${encodeURIComponent(sid)}`, { jsonrpc: '2.0', id: 1, method: 'ping' });
    await expectRpcError(r, 404, { code: -32600 });
  });
});
