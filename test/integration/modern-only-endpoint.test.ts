// An endpoint with `eras: [modern]` answers 2025-era traffic as a 2026-07-28-only server does: initialize
// and every other request without modern _meta get the era's unsupported-version error naming what it
// serves, GET/DELETE are 405, the legacy HTTP+SSE paths are not served; a reload that takes the legacy era
// away ends that endpoint's 2025 sessions, and one that takes the modern era away ends its standings.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { FIXTURE, type RunningGateway } from '../helpers/gateway.js';
import { fileGateway, type FileGateway } from '../helpers/file-gateway.js';
import { expectRpcError, initializeBody } from '../helpers/http-edge.js';
import { MODERN_VERSION, modernPost, openListen } from '../helpers/modern-http.js';
import { connectClient, textOf } from '../helpers/sdk.js';

type Doc = Record<string, any>;

function doc(eras: Record<string, string[]> = {}): Doc {
  return {
    server: { host: '127.0.0.1', port: 0 },
    metrics: { enabled: false },
    logging: { level: process.env.LOG_LEVEL ?? 'silent' },
    pinning: { mode: 'off' },
    upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared', pool: { size: 1 } }],
    endpoints: [
      { path: '/mcp', upstreams: ['fx'], eras: eras['/mcp'] ?? ['modern'] },
      { path: '/both', upstreams: ['fx'], ...(eras['/both'] ? { eras: eras['/both'] } : {}) },
    ],
  };
}

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

function postTo(gw: RunningGateway, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(gw.url(path), { method: 'POST', headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
}

/** The answer of a 2026-07-28-only server to a 2025 request: 400 -32022 naming the versions it serves. */
async function expectUnsupported(res: Response, id: number, requested: string | undefined): Promise<void> {
  assert.equal(res.headers.get('mcp-session-id'), null, 'no session is minted');
  const body = await expectRpcError(res, 400, { code: -32022, id });
  assert.deepEqual(body.error.data.supported, [MODERN_VERSION]);
  assert.equal(body.error.data.requested, requested);
}

describe('an endpoint with eras: [modern]', () => {
  let f: FileGateway;
  const clients: Client[] = [];
  before(async () => {
    f = await fileGateway('swb-modern-only-', doc());
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await f.close();
  });

  it('answers 2025-era requests as a 2026-07-28-only server would, and serves modern ones', async () => {
    const { gw } = f;
    await expectUnsupported(await postTo(gw, '/mcp', initializeBody('2025-06-18', 7)), 7, '2025-06-18');
    const list = { jsonrpc: '2.0', id: 8, method: 'tools/list', params: {} };
    await expectUnsupported(await postTo(gw, '/mcp', list, { 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': 'made-up' }), 8, '2025-11-25');
    await expectUnsupported(await postTo(gw, '/mcp', list), 8, undefined);
    const get = await fetch(gw.url('/mcp'), { headers: { accept: 'text/event-stream', 'mcp-session-id': 'made-up' } });
    assert.equal(get.status, 405, 'no standalone stream');
    await get.body?.cancel();
    const del = await fetch(gw.url('/mcp'), { method: 'DELETE', headers: { 'mcp-session-id': 'made-up' } });
    assert.equal(del.status, 405, 'no session to delete');
    await del.body?.cancel();
    const put = await fetch(gw.url('/mcp'), { method: 'PUT', headers: JSON_HEADERS, body: '{}' });
    assert.deepEqual([put.status, put.headers.get('allow')], [405, 'POST'], 'Allow names only what the path serves');
    await put.body?.cancel();
    const sse = await fetch(gw.url('/sse'), { headers: { accept: 'text/event-stream' } });
    assert.equal(sse.status, 404, 'the legacy HTTP+SSE stream is not served');
    await sse.body?.cancel();
    const messages = await postTo(gw, '/messages?sessionId=x', list);
    assert.equal(messages.status, 404, 'nor its message path');
    await messages.body?.cancel();
    const call = await modernPost(gw.url('/mcp'), 'tools/call', { name: 'test_simple_text', arguments: {} });
    assert.equal(call.status, 200, JSON.stringify(call.body));
    assert.equal(call.body.result.content[0].text, 'This is a simple text response for testing.');
    const both = await postTo(gw, '/both', initializeBody('2025-06-18'));
    assert.equal(both.status, 200, 'a dual-era endpoint still opens sessions');
    assert.ok(both.headers.get('mcp-session-id'));
    await both.body?.cancel();
  });

  it("a reload that switches an era off: that era's sessions on the endpoint end and its traffic is refused; switched on again, it is served", async () => {
    const { gw, app } = f;
    const streamable = await connectClient(gw, 'streamable-http', { path: '/both' });
    const sse = await connectClient(gw, 'sse', { path: '/both' });
    clients.push(streamable, sse);
    const simple = async (c: Client) => textOf(await c.callTool({ name: 'test_simple_text', arguments: {} }));
    assert.match(await simple(streamable), /simple text/);
    f.write(doc({ '/both': ['modern'] }));
    const { report } = await app.reload('test');
    assert.equal(report.result, 'applied', JSON.stringify(report));
    assert.ok(report.sessionsEnded >= 2, JSON.stringify(report));
    await assert.rejects(simple(streamable), 'the Streamable HTTP session ended');
    await assert.rejects(simple(sse), 'the HTTP+SSE session ended');
    await expectUnsupported(await postTo(gw, '/both', initializeBody('2025-11-25', 3)), 3, '2025-11-25');
    const stream = await fetch(gw.url('/both/sse'), { headers: { accept: 'text/event-stream' } });
    assert.equal(stream.status, 404);
    await stream.body?.cancel();

    // The other way: a listen stream open on an endpoint whose modern era a reload takes away ends.
    const listen = await openListen(gw.url('/both'), 'l1', { toolsListChanged: true });
    assert.equal(listen.status, 200);
    assert.equal((await listen.next()).method, 'notifications/subscriptions/acknowledged');
    f.write(doc({ '/both': ['legacy'] }));
    assert.equal((await app.reload('test')).report.result, 'applied');
    assert.equal(app.gateway.modern.sessions.list().filter((s) => s.endpoint.config.path === '/both').length, 0, 'the standing on /both ended');
    // A list_changed for the changed endpoint may come first; the stream's end follows.
    let last = await listen.next();
    for (let i = 0; i < 5 && !('result' in last); i++) last = await listen.next();
    assert.equal(last?.result?.resultType, 'complete', `the listen stream ends with its final result: ${JSON.stringify(last)}`);
    const refused = await fetch(gw.url('/both'), { method: 'POST', headers: { ...JSON_HEADERS, 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'tools/list' }, body: JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION, 'io.modelcontextprotocol/clientCapabilities': {} } } }) });
    await expectRpcError(refused, 400, { code: -32600, id: 4 }); // as a 2025 server answers it
    const opened = await postTo(gw, '/both', initializeBody('2025-11-25'));
    assert.equal(opened.status, 200, 'legacy served again');
    await opened.body?.cancel();
  });
});
