// What the edge accepts as a client message, through fastify.inject() (no port): the Content-Type
// (issue 13.7), ids beyond 2^53 (13.9) and nesting depth (13.8), on Streamable HTTP and legacy SSE.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildApp, type App } from '../../../src/app.js';
import { parseConfig } from '../../../src/config/load.js';
import { isJsonContentType } from '../../../src/edge/content-type.js';
import { createLogger } from '../../../src/observability/logger.js';
import { FIXTURE } from '../../helpers/gateway.js';

const ACCEPT = 'application/json, text/event-stream';
const init = (id: string | number) => `{"jsonrpc":"2.0","id":${id},"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`;

describe('isJsonContentType', () => {
  it('accepts application/json with no charset or UTF-8, in any case', () => {
    for (const h of ['application/json', 'Application/JSON', 'application/json; charset=utf-8', 'application/json;charset=UTF-8', 'application/json; charset="utf-8"', 'application/json ; foo=bar']) {
      assert.equal(isJsonContentType(h), true, h);
    }
  });
  it('refuses other media types, other charsets and malformed parameters', () => {
    for (const h of [undefined, '', 'application/jsonx', 'application/json-patch+json', 'text/json', 'application/json; charset=utf-16', 'application/json; charset=iso-8859-1', 'application/json; charset', 'application/json; charset="utf-8', 'application/json, text/plain']) {
      assert.equal(isJsonContentType(h), false, String(h));
    }
  });
});

describe('message acceptance at the edge (inject)', () => {
  let app: App;

  before(async () => {
    const config = parseConfig({
      server: { host: '127.0.0.1', port: 0 },
      metrics: { enabled: false },
      logging: { level: 'silent' },
      upstreams: [{ name: 'fixture', transport: 'stdio', ...FIXTURE, sharing: 'shared' }],
      endpoints: [{ path: '/mcp', upstreams: ['fixture'] }],
    });
    app = await buildApp(config, { logger: createLogger('silent') });
    await app.gateway.start();
  });

  after(async () => {
    await app?.close();
  });

  const post = (payload: string, headers: Record<string, string> = {}, url = '/mcp') =>
    app.fastify.inject({ method: 'POST', url, headers: { accept: ACCEPT, 'content-type': 'application/json', ...headers }, payload });

  it('415 for application/jsonx and for a UTF-16 charset, on both transports', async () => {
    for (const ct of ['application/jsonx', 'application/json; charset=utf-16', 'text/plain']) {
      const r = await post(init(1), { 'content-type': ct });
      assert.equal(r.statusCode, 415, `${ct}: ${r.body}`);
      assert.match(r.json().error.message, /Unsupported Media Type/);
    }
  });

  it('415 on the legacy message path too', async () => {
    const stream = await app.fastify.inject({ method: 'GET', url: '/sse', headers: { accept: 'text/event-stream' }, payloadAsStream: true });
    const first = await new Promise<string>((res) => stream.stream().once('data', (b: Buffer) => res(b.toString())));
    const endpoint = /data: (\S+)/.exec(first)![1]!;
    const r = await post('{"jsonrpc":"2.0","method":"notifications/initialized"}', { 'content-type': 'application/jsonx' }, endpoint);
    assert.equal(r.statusCode, 415, r.body);
    const ok = await post('{"jsonrpc":"2.0","id":1,"method":"ping"}', { 'content-type': 'application/json; charset=UTF-8' }, endpoint);
    assert.equal(ok.statusCode, 202, ok.body);
    stream.raw.res.destroy();
  });

  it('an integer id beyond 2^53 is refused with -32600 (id null), never answered with a changed id', async () => {
    for (const id of ['18446744073709551616', '9007199254740993', '-9007199254740993']) {
      const r = await post(init(id));
      assert.equal(r.statusCode, 400, r.body);
      const body = r.json();
      assert.equal(body.error.code, -32600);
      assert.equal(body.id, null);
      assert.match(body.error.message, /2\^53/);
      assert.ok(!r.body.includes('18446744073709552000'));
    }
  });

  it('the largest safe integer id and a long string id come back byte-identical', async () => {
    for (const id of ['9007199254740991', '"18446744073709551616"']) {
      const r = await post(init(id));
      assert.equal(r.statusCode, 200, r.body);
      assert.ok(r.body.includes(`"id":${id}`), r.body);
      await app.fastify.inject({ method: 'DELETE', url: '/mcp', headers: { 'mcp-session-id': r.headers['mcp-session-id'] as string } });
    }
  });

  it('30,000 nested arrays in params: -32600, not an internal error', async () => {
    const deep = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"a":${'['.repeat(30_000)}${']'.repeat(30_000)}}}}`;
    const r = await post(deep);
    assert.equal(r.statusCode, 400, r.body.slice(0, 300));
    assert.equal(r.json().error.code, -32600);
    assert.match(r.json().error.message, /deeper than 64 levels/);
  });

  it('nesting up to the limit is accepted', async () => {
    // The message is level 1, params 2, capabilities 3: 61 nested arrays reach level 64.
    const ok = `{"jsonrpc":"2.0","id":8,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"x":${'['.repeat(61)}${']'.repeat(61)}},"clientInfo":{"name":"t","version":"0"}}}`;
    const r = await post(ok);
    assert.equal(r.statusCode, 200, r.body.slice(0, 300));
    await app.fastify.inject({ method: 'DELETE', url: '/mcp', headers: { 'mcp-session-id': r.headers['mcp-session-id'] as string } });
    const over = ok.replace('"x":[', '"x":[[').replace(']}', ']]}');
    assert.equal((await post(over)).statusCode, 400);
  });

  it('brackets inside strings are not nesting: a shallow message with hundreds of them is accepted', async () => {
    const text = `{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"${'{['.repeat(300)}","version":"0"}}}`;
    const r = await post(text);
    assert.equal(r.statusCode, 200, r.body.slice(0, 300));
    await app.fastify.inject({ method: 'DELETE', url: '/mcp', headers: { 'mcp-session-id': r.headers['mcp-session-id'] as string } });
  });

  it('a JSON answer goes out whole with its Content-Length, never chunked: a session\'s, a 2026-07-28 request\'s, a refusal', async () => {
    const whole = (r: { headers: Record<string, unknown>; rawPayload: Buffer; body: string }, what: string) => {
      assert.equal(r.headers['transfer-encoding'], undefined, what);
      assert.equal(r.headers['content-length'], String(r.rawPayload.length), `${what}: ${r.body.slice(0, 200)}`);
      assert.match(String(r.headers['content-type']), /^application\/json/, what);
    };
    const opened = await post(init(10));
    whole(opened, 'initialize');
    const sid = opened.headers['mcp-session-id'] as string;
    await post('{"jsonrpc":"2.0","method":"notifications/initialized"}', { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' });
    const ping = await post('{"jsonrpc":"2.0","id":11,"method":"ping"}', { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' });
    assert.equal(ping.statusCode, 200, ping.body);
    whole(ping, 'a session answer');
    await app.fastify.inject({ method: 'DELETE', url: '/mcp', headers: { 'mcp-session-id': sid } });
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
    const modern = await post(JSON.stringify({ jsonrpc: '2.0', id: 12, method: 'tools/list', params: { _meta: meta } }), { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' });
    assert.equal(modern.statusCode, 200, modern.body);
    assert.ok(Array.isArray(modern.json().result.tools), modern.body);
    whole(modern, 'a modern answer');
    const refused = await post(JSON.stringify({ jsonrpc: '2.0', id: 13, method: 'tools/list', params: { _meta: { ...meta, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } } }), { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' });
    assert.equal(refused.statusCode, 400, refused.body);
    whole(refused, 'a modern refusal');
  });
});
