// POSTs of client messages are served from node:http directly, past Fastify (src/edge/direct-posts.ts).
// These tests send the same requests to one gateway twice: over a real socket (which takes the direct
// path whenever the request qualifies) and through fastify.inject() (which always takes Fastify's route),
// and require the same answer: status, the headers a client acts on, and the body. They also check that
// the direct path is really taken (Fastify's onRequest hooks never see those requests) and that every
// request it must not take still reaches Fastify.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { buildApp, type App } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/observability/logger.js';
import { openRawSocket } from '../helpers/raw-socket.js';
import { until } from '../helpers/wait.js';
import { fixtureConfig, initializeBody, type Json } from '../helpers/http-edge.js';
import { ISSUER, PUBLIC_URL, signHmac } from '../helpers/tokens.js';

interface Answer {
  status: number;
  headers: Record<string, string | undefined>;
  body: string;
}

/** The headers a client acts on (the rest, like Date, differ by nature). */
const COMPARED = ['content-type', 'www-authenticate', 'retry-after', 'allow', 'connection'];

const HMAC = 'direct-posts-test-secret-0123456789abcdef';

class TwoPaths {
  readonly app: App;
  port = 0;
  /** Requests Fastify's onRequest hooks saw: the direct path's never show up here. */
  fastifySaw = 0;

  constructor(app: App) {
    this.app = app;
    app.fastify.addHook('onRequest', (_req, _reply, done) => {
      this.fastifySaw++;
      done();
    });
  }

  static async start(input: Json): Promise<TwoPaths> {
    const config = parseConfig({ metrics: { enabled: false }, ...input, server: { host: '127.0.0.1', port: 0, ...input.server }, logging: { level: 'silent' } });
    const t = new TwoPaths(await buildApp(config, { logger: createLogger('silent') }));
    t.port = Number(new URL(await t.app.listen()).port);
    return t;
  }

  /** Over a real socket, with exactly these headers (Host and Content-Length included, as given). */
  http(o: { method?: string; path?: string; headers: Record<string, string>; body?: string }): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: this.port, method: o.method ?? 'POST', path: o.path ?? '/mcp', headers: o.headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: pick(res.headers), body }));
      });
      req.on('error', reject);
      req.end(o.body);
    });
  }

  async inject(o: { method?: string; path?: string; headers: Record<string, string>; body?: string }): Promise<Answer> {
    const r = await this.app.fastify.inject({ method: (o.method ?? 'POST') as 'POST', url: o.path ?? '/mcp', headers: o.headers, ...(o.body === undefined ? {} : { payload: o.body }) });
    return { status: r.statusCode, headers: pick(r.headers as Record<string, string | string[] | undefined>), body: r.payload };
  }

  /** Both answers, which must agree; `direct` says whether the socket's request may reach Fastify. */
  async same(o: { method?: string; path?: string; headers: Record<string, string>; body?: string }, direct: boolean): Promise<Answer> {
    const before = this.fastifySaw;
    const viaSocket = await this.http(o);
    assert.equal(this.fastifySaw - before, direct ? 0 : 1, `${direct ? 'served directly' : 'served by Fastify'}: ${o.body?.slice(0, 60)}`);
    const viaFastify = await this.inject(o);
    assert.equal(this.fastifySaw - before, direct ? 1 : 2, 'inject always goes through Fastify');
    assert.deepEqual(normalise(viaSocket), normalise(viaFastify));
    return viaSocket;
  }

  close(): Promise<void> {
    return this.app.close();
  }
}

function pick(h: Record<string, string | string[] | undefined>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const k of COMPARED) {
    const v = h[k];
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : String(v);
  }
  return out;
}

/** Session ids differ from one session to the next: compared by shape. */
function normalise(a: Answer): Answer {
  return { ...a, body: a.body.replace(/"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"/g, '"<uuid>"') };
}

function jsonHeaders(t: TwoPaths, body: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    host: `127.0.0.1:${t.port}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'content-length': String(Buffer.byteLength(body)),
    ...extra,
  };
}

const call = (id: number, method = 'tools/list', params: Json = {}) => JSON.stringify({ jsonrpc: '2.0', id, method, params });

describe('direct POSTs answer exactly as the Fastify route does', () => {
  let t: TwoPaths;
  let sid: string;

  before(async () => {
    t = await TwoPaths.start(fixtureConfig({ maxBodyBytes: 4096, responseMode: 'json' }));
    const init = JSON.stringify(initializeBody('2025-11-25', 1));
    const r = await new Promise<string>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: t.port, method: 'POST', path: '/mcp', headers: jsonHeaders(t, init) }, (res) => {
        resolve(String(res.headers['mcp-session-id']));
        res.resume();
      });
      req.on('error', reject);
      req.end(init);
    });
    sid = r;
    const initialized = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });
    assert.equal((await t.http({ headers: jsonHeaders(t, initialized, { 'mcp-session-id': sid }), body: initialized })).status, 202);
  });
  after(async () => {
    await t?.close();
  });

  it('initialize, and a call in a session', async () => {
    const init = JSON.stringify(initializeBody('2025-11-25', 7));
    const a = await t.same({ headers: jsonHeaders(t, init), body: init }, true);
    assert.equal(a.status, 200);
    const list = call(8);
    const b = await t.same({ headers: jsonHeaders(t, list, { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' }), body: list }, true);
    assert.equal(b.status, 200);
    assert.match(b.body, /"tools"/);
  });

  it('a body trickled a byte per write over a raw socket, splitting its multi-byte characters, is read whole', async () => {
    const id = 'é€😀-trickled';
    const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' });
    const bytes = Buffer.from(body);
    const head = `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${t.port}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-session-id: ${sid}\r\nmcp-protocol-version: 2025-11-25\r\ncontent-length: ${bytes.length}\r\nconnection: close\r\n\r\n`;
    const before = t.fastifySaw;
    const c = await openRawSocket('127.0.0.1', t.port);
    c.socket.setNoDelay(true);
    await new Promise((r) => c.socket.write(head, r));
    for (let i = 0; i < bytes.length; i++) {
      await new Promise((r) => c.socket.write(bytes.subarray(i, i + 1), r));
      await new Promise((r) => setImmediate(r));
    }
    await until('the answer', () => c.closed());
    const answer = c.received();
    assert.match(answer, /^HTTP\/1\.1 200 /);
    assert.deepEqual(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)), { jsonrpc: '2.0', id, result: {} });
    assert.equal(t.fastifySaw, before, 'served directly');
  });

  it('refusals decided by the route: Accept, JSON, JSON-RPC, depth, sessions, batches', async () => {
    const cases: Array<[string, Record<string, string>, number]> = [
      [call(1), { accept: 'application/json' }, 406],
      ['{"jsonrpc": "2.0", "id": 1, "method": ', {}, 400],
      [JSON.stringify({ id: 1, method: 'tools/list' }), {}, 400],
      [JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { a: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]] } }), { 'mcp-session-id': sid }, 400],
      [call(2), {}, 400],
      [call(3), { 'mcp-session-id': '00000000-0000-4000-8000-000000000000' }, 404],
      [JSON.stringify([initializeBody('2025-03-26', 9), { jsonrpc: '2.0', id: 10, method: 'ping' }]), {}, 400],
      [JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), { 'mcp-session-id': sid }, 202],
    ];
    for (const [body, extra, status] of cases) {
      const a = await t.same({ headers: jsonHeaders(t, body, extra), body }, true);
      assert.equal(a.status, status, `${body.slice(0, 60)} → ${a.body}`);
    }
  });

  it('refusals decided by the front door: Host and Origin', async () => {
    const body = call(4);
    const wrongHost = await t.same({ headers: jsonHeaders(t, body, { host: 'evil.example:80', 'mcp-session-id': sid }), body }, true);
    assert.equal(wrongHost.status, 403);
    const wrongOrigin = await t.same({ headers: jsonHeaders(t, body, { origin: 'https://evil.example', 'mcp-session-id': sid }), body }, true);
    assert.equal(wrongOrigin.status, 403);
    assert.equal(wrongOrigin.headers.connection, 'close');
  });

  it('the 2026-07-28 era, both answers and refusals', async () => {
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
    const discover = JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'server/discover', params: { _meta: meta } });
    const ok = await t.same({ headers: jsonHeaders(t, discover, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' }), body: discover }, true);
    assert.equal(ok.status, 200, `${ok.body} ${ok.headers["www-authenticate"]}`);
    const mismatch = await t.same({ headers: jsonHeaders(t, discover, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' }), body: discover }, true);
    assert.equal(mismatch.status, 400);
    assert.match(mismatch.body, /-32020/);
  });

  it('the legacy message path: a POST without, or with an unknown, session', async () => {
    const body = call(6);
    const none = await t.same({ path: '/messages', headers: jsonHeaders(t, body), body }, true);
    assert.equal(none.status, 400);
    const unknown = await t.same({ path: '/messages?sessionId=nope', headers: jsonHeaders(t, body), body }, true);
    assert.equal(unknown.status, 404);
    // Two sessions named: none is taken (not the first, not the last).
    const two = await t.same({ path: '/messages?sessionId=a&sessionId=b', headers: jsonHeaders(t, body), body }, true);
    assert.equal(two.status, 400);
  });

  it('leaves to Fastify what it must not take: other media types, no or oversized length, chunked bodies, other paths and methods', async () => {
    const body = call(11);
    const plain = await t.same({ headers: { ...jsonHeaders(t, body), 'content-type': 'text/plain' }, body }, false);
    assert.equal(plain.status, 415);
    const big = JSON.stringify({ jsonrpc: '2.0', id: 12, method: 'tools/list', params: { pad: 'x'.repeat(5000) } });
    const tooBig = await t.same({ headers: jsonHeaders(t, big, { 'mcp-session-id': sid }), body: big }, false);
    assert.equal(tooBig.status, 413);
    const nowhere = await t.same({ path: '/nowhere', headers: jsonHeaders(t, body), body }, false);
    assert.equal(nowhere.status, 404);
    const del = await t.same({ method: 'DELETE', headers: { host: `127.0.0.1:${t.port}` } }, false);
    assert.ok(del.status >= 400, del.body);
    // Chunked (no Content-Length): over the socket only, since inject always sends a length.
    const before = t.fastifySaw;
    const headers = jsonHeaders(t, body, { 'mcp-session-id': sid, 'transfer-encoding': 'chunked' });
    delete headers['content-length'];
    const chunked = await t.http({ headers, body });
    assert.equal(chunked.status, 200, chunked.body);
    assert.equal(t.fastifySaw - before, 1);
  });
});

describe('direct POSTs behind authentication', () => {
  let t: TwoPaths;

  before(async () => {
    t = await TwoPaths.start({
      ...fixtureConfig({ publicUrl: PUBLIC_URL, responseMode: 'json' }),
      auth: { mode: 'jwt', issuer: ISSUER, audience: [PUBLIC_URL], hmacSecret: HMAC, allowHmac: true, algorithms: ['HS256'] },
      tenants: [{ name: 'acme', endpoints: ['*'] }],
    });
  });
  after(async () => {
    await t?.close();
  });

  it('no token, a forged token and a good one get the same answers on both paths', async () => {
    const init = JSON.stringify(initializeBody('2025-11-25', 1));
    const none = await t.same({ headers: jsonHeaders(t, init), body: init }, true);
    assert.equal(none.status, 401);
    assert.match(none.headers['www-authenticate'] ?? '', /^Bearer /);
    assert.equal(none.headers.connection, 'close');
    const good = await signHmac(HMAC);
    const forged = `${good.slice(0, -4)}AAAA`;
    const bad = await t.same({ headers: jsonHeaders(t, init, { authorization: `Bearer ${forged}` }), body: init }, true);
    assert.equal(bad.status, 401);
    const ok = await t.same({ headers: jsonHeaders(t, init, { authorization: `Bearer ${good}` }), body: init }, true);
    assert.equal(ok.status, 200, `${ok.body} ${ok.headers["www-authenticate"]}`);
  });
});
