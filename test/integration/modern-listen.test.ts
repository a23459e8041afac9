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

  it('ends with a final result that names the subscription and carries serverInfo, as every 2026-07-28 result does', async () => {
    const listen = await openListen(gw.url(), 'listen-end', { toolsListChanged: true });
    try {
      assert.equal((await listen.next()).method, 'notifications/subscriptions/acknowledged');
      for (const s of gw.app.gateway.modern.sessions.list()) await gw.app.gateway.modern.sessions.end(s.id);
      let last = await listen.next();
      for (let i = 0; i < 5 && !('result' in last); i++) last = await listen.next();
      assert.equal(last.id, 'listen-end');
      assert.equal(last.result.resultType, 'complete');
      assert.equal(last.result._meta['io.modelcontextprotocol/subscriptionId'], 'listen-end');
      assert.equal(last.result._meta['io.modelcontextprotocol/serverInfo']?.name, 'switchboard', JSON.stringify(last));
    } finally {
      listen.close();
    }
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

describe('subscriptions/listen streams past modern.listensPerPrincipal (found by a review)', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      modern: { listensPerPrincipal: 2 },
      pinning: { mode: 'off' },
      upstreams: [{ name: 'shifty', transport: 'stdio', command: process.execPath, args: ['test/fixtures/shifty-server.mjs', '--shift-after-call'], sandbox: 'none', sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['shifty'] }],
    });
  });
  after(() => gw.close());

  it('one more than the bound ends the oldest with an error naming the setting; the newer ones keep delivering', async () => {
    const streams = [];
    for (const id of ['a', 'b', 'c']) {
      const l = await openListen(gw.url(), id, { toolsListChanged: true });
      assert.equal(l.status, 200);
      assert.equal((await l.next()).method, 'notifications/subscriptions/acknowledged');
      streams.push(l);
    }
    try {
      const [a, b, c] = streams as [(typeof streams)[0], (typeof streams)[0], (typeof streams)[0]];
      const ended = await a.next();
      assert.equal(ended.id, 'a');
      assert.match(ended.error.message, /modern\.listensPerPrincipal/);
      await assert.rejects(a.next(), /the listen stream ended/);
      const call = await fetch(gw.url(), {
        method: 'POST',
        headers: { ...HEADERS, 'mcp-method': 'tools/call', 'mcp-name': 'weather' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'weather', arguments: { city: 'Oslo' }, _meta: META } }),
      });
      await call.text();
      assert.equal((await b.next()).method, 'notifications/tools/list_changed');
      assert.equal((await c.next()).method, 'notifications/tools/list_changed');
    } finally {
      for (const l of streams) l.close();
    }
  });
});
