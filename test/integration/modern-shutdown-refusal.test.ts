// A 2026-07-28 request that arrives while the gateway drains (SIGTERM, calls still in flight) is refused
// 503 as a new 2025 session is: with the gateway's code in error.data.code (SWB_SHUTTING_DOWN, README
// "Errors") and a Retry-After, so a client retries on another replica. The modern refusal had the message
// alone and no Retry-After.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EVERYTHING, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';
import { until } from '../helpers/wait.js';

describe('a 2026-07-28 request while the gateway drains', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let closed: Promise<void> | undefined;
  before(async () => {
    gw = await startGateway({ upstreams: [{ name: 'everything', transport: 'stdio', ...EVERYTHING, sharing: 'shared' }], endpoints: [{ path: '/mcp', upstreams: ['everything'] }] });
  });
  after(async () => {
    await (closed ?? gw?.close());
  });

  it('is refused 503 with SWB_SHUTTING_DOWN in error.data.code and a Retry-After', async () => {
    // A call that keeps the drain open while the next request arrives.
    const long = modernPost(gw.url(), 'tools/call', { name: 'trigger-long-running-operation', arguments: { duration: 3, steps: 3 } }, { caps: {} }).catch(() => undefined);
    await until('the long call is in flight', () => gw.app.gateway.modern.sessions.inflight > 0, 20_000);
    closed = gw.app.close();
    const refused = await fetch(gw.url(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } } }),
    });
    const body = (await refused.json()) as any;
    assert.equal(refused.status, 503, JSON.stringify(body));
    assert.equal(body.id, 7);
    assert.equal(body.error.data?.code, 'SWB_SHUTTING_DOWN', JSON.stringify(body));
    assert.ok(refused.headers.get('retry-after'), 'a Retry-After');
    await long;
  });
});
