import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { Journal, openListen } from '../helpers/modern-http.js';

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

describe('subscriptions/listen asking for more resource URIs than one listen may subscribe to', () => {
  const journal = new Journal();
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      upstreams: [{ name: 'fx', transport: 'stdio', command: FIXTURE.command, args: [...FIXTURE.args, '--journal', journal.file], sandbox: 'none', sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
  });
  after(() => gw.close());

  it('subscribes upstream to the first modern.listenUrisMax (100) of them and acknowledges just those', async () => {
    // URIs the fixture's template describes: each one the tenant may read, and each a resources/subscribe upstream.
    const uris = Array.from({ length: 250 }, (_, i) => `test://template/${i}/data`);
    const mark = journal.mark();
    const listen = await openListen(gw.url(), 'many', { resourceSubscriptions: [...uris, uris[0]] });
    try {
      const ack = await listen.next();
      assert.equal(ack.method, 'notifications/subscriptions/acknowledged');
      assert.deepEqual(ack.params.notifications.resourceSubscriptions, uris.slice(0, 100));
      const subscribes = journal.since(mark).filter((m) => m.method === 'resources/subscribe');
      assert.equal(subscribes.length, 100, 'one request of the tenant\'s rate makes at most 100 upstream subscriptions');
    } finally {
      listen.close();
    }
  });
});
