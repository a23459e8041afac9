// What the edge refuses before a message reaches a session (malformed JSON, invalid JSON-RPC, an unknown
// or missing session, an oversized body, a wrong Content-Type or Accept) was answered, but counted in
// no metric and written to no log line: a client sending garbage, or a fleet of clients whose sessions a
// restart lost (404 after 404), left the gateway's metrics and log as if nothing arrived. Found by a review.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FIXTURE, startGateway, startLoggedFixtureGateway } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

function sample(text: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`switchboard_http_refusals_total{${labels}}`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('metrics: HTTP refusals at the edge', () => {
  it('malformed JSON, invalid JSON-RPC, unknown session, oversized body, wrong media type: counted by status and code, and logged', async () => {
    const lines: string[] = [];
    const gw = await startGateway(
      {
        server: { maxBodyBytes: 4096 },
        tenants: [{ name: 'anonymous', endpoints: ['*'] }],
        upstreams: [{ name: 'one', transport: 'stdio', ...FIXTURE }],
        endpoints: [{ path: '/mcp', upstreams: ['one'] }],
      },
      { logLines: lines },
    );
    try {
      const post = (body: string, headers: Record<string, string> = {}) => fetch(gw.url(), { method: 'POST', headers: { ...HEADERS, ...headers }, body }).then((r) => r.status);
      assert.equal(await post('{bad'), 400);
      assert.equal(await post('{bad'), 400);
      assert.equal(await post('{"jsonrpc":"2.0","id":1}'), 400);
      assert.equal(await post('{"jsonrpc":"2.0","id":1,"method":"tools/list"}', { 'mcp-session-id': 'no-such-session', 'mcp-protocol-version': '2025-06-18' }), 404);
      assert.equal(await post(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${'x'.repeat(8000)}"}}`), 413);
      assert.equal(await post('{}', { 'content-type': 'text/plain' }), 415);
      const text = await (await fetch(gw.app.metricsUrl!)).text();
      assert.equal(sample(text, 'status="400",code="-32700"'), 2, text);
      assert.equal(sample(text, 'status="400",code="-32600"'), 1, text);
      assert.equal(sample(text, 'status="404",code="-32600"'), 1, text);
      assert.equal(sample(text, 'status="413",code="-32600"'), 1, text);
      assert.equal(sample(text, 'status="415",code="-32000"'), 1, text);
      await until('the refusals were logged', () => lines.filter((l) => l.includes('"msg":"request refused"')).length >= 6);
      const notFound = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'request refused' && l.status === 404);
      assert.ok(notFound && typeof notFound.err === 'string' && /Session not found/.test(notFound.err), JSON.stringify(notFound));
    } finally {
      await gw.close();
    }
  });

  it('a GET stream refused after its reply was taken over (an unknown Last-Event-ID) is counted too', async () => {
    const gw = await startGateway({
      tenants: [{ name: 'anonymous', endpoints: ['*'] }],
      upstreams: [{ name: 'one', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: '/mcp', upstreams: ['one'] }],
    });
    try {
      const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
      const started = await fetch(gw.url(), { method: 'POST', headers: HEADERS, body: JSON.stringify(init) });
      const session = started.headers.get('mcp-session-id')!;
      await started.text();
      const headers = { accept: 'text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18', 'last-event-id': 'no-such-event' };
      const resumed = await fetch(gw.url(), { headers });
      assert.equal(resumed.status, 400, await resumed.text());
      const text = await (await fetch(gw.app.metricsUrl!)).text();
      assert.equal(sample(text, 'status="400",code="-32600"'), 1, text);
    } finally {
      await gw.close();
    }
  });
  it("a 2026-07-28 request's header or _meta problems (400, -32020 and -32602) are counted and logged too", async () => {
    const lines: string[] = [];
    const gw = await startLoggedFixtureGateway(lines);
    try {
      const modern = { ...HEADERS, 'mcp-protocol-version': '2026-07-28' };
      const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
      const post = (headers: Record<string, string>, params: Record<string, unknown>) =>
        fetch(gw.url(), { method: 'POST', headers: { ...modern, ...headers }, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params }) });
      // Mcp-Method names another method than the body's.
      const mismatch = await post({ 'mcp-method': 'tools/call' }, { _meta: meta });
      assert.equal(mismatch.status, 400);
      assert.equal(((await mismatch.json()) as { error: { code: number } }).error.code, -32020);
      // No client capabilities in _meta.
      const noCaps = await post({ 'mcp-method': 'tools/list' }, { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } });
      assert.equal(noCaps.status, 400);
      assert.equal(((await noCaps.json()) as { error: { code: number } }).error.code, -32602);
      const text = await (await fetch(gw.app.metricsUrl!)).text();
      assert.equal(sample(text, 'status="400",code="-32020"'), 1, text);
      assert.equal(sample(text, 'status="400",code="-32602"'), 1, text);
      await until('the refusals were logged', () => lines.filter((l) => l.includes('"msg":"request refused"')).length >= 2);
      const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'request refused');
      assert.ok(logged.some((l) => l.code === -32020 && /Mcp-Method/.test(String(l.err))), JSON.stringify(logged));
    } finally {
      await gw.close();
    }
  });
  it('a 2025-era request on an endpoint that serves only 2026-07-28 (400, -32022) is counted and logged too', async () => {
    const lines: string[] = [];
    const gw = await startGateway(
      {
        tenants: [{ name: 'anonymous', endpoints: ['*'] }],
        upstreams: [{ name: 'one', transport: 'stdio', ...FIXTURE }],
        endpoints: [{ path: '/mcp', upstreams: ['one'], eras: ['modern'] }],
      },
      { logLines: lines },
    );
    try {
      const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
      const res = await fetch(gw.url(), { method: 'POST', headers: HEADERS, body: JSON.stringify(init) });
      assert.equal(res.status, 400);
      assert.equal(((await res.json()) as { error: { code: number } }).error.code, -32022);
      const text = await (await fetch(gw.app.metricsUrl!)).text();
      assert.equal(sample(text, 'status="400",code="-32022"'), 1, text);
      await until('the refusal was logged', () => lines.some((l) => l.includes('"msg":"request refused"') && l.includes('-32022')));
    } finally {
      await gw.close();
    }
  });
});
