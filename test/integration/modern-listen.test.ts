import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { openListen } from '../helpers/modern-http.js';

const V = '2026-07-28';
const META = { 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientCapabilities': {} };
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': V };

describe('subscriptions/listen from a 2025 upstream', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      upstreams: [{ name: 'shifty', transport: 'stdio', command: process.execPath, args: ['test/fixtures/shifty-server.mjs', '--shift-after-call'], sandbox: 'none', sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['shifty'] }],
    });
  });
  after(() => gw.close());

  it('acknowledges what it can honour first, then delivers list_changed tagged with the subscription id', async () => {
    const listen = await openListen(gw.url(), 'listen-1', { toolsListChanged: true, promptsListChanged: true });
    assert.equal(listen.status, 200);
    const next = listen.next;
    const ack = await next();
    assert.equal(ack.method, 'notifications/subscriptions/acknowledged');
    assert.deepEqual(ack.params.notifications, { toolsListChanged: true }, 'the upstream has no prompts: not honoured');
    assert.equal(ack.params._meta['io.modelcontextprotocol/subscriptionId'], 'listen-1');
    const call = await fetch(gw.url(), {
      method: 'POST',
      headers: { ...HEADERS, 'mcp-method': 'tools/call', 'mcp-name': 'weather' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'weather', arguments: { city: 'Oslo' }, _meta: META } }),
    });
    assert.equal(call.status, 200);
    await call.text();
    const changed = await next();
    assert.equal(changed.method, 'notifications/tools/list_changed');
    assert.equal(changed.params._meta['io.modelcontextprotocol/subscriptionId'], 'listen-1');
    listen.close();
  });
});
