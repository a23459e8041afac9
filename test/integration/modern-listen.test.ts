import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';

const V = '2026-07-28';
const META = { 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientCapabilities': {} };
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': V };

/** Reads SSE messages from a streaming fetch body, one at a time. */
function sseMessages(body: ReadableStream<Uint8Array>): () => Promise<any> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  return async () => {
    for (;;) {
      const i = buf.indexOf('\n\n');
      if (i >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.replace(/^data: ?/, '')).join('\n');
        if (data) return JSON.parse(data);
        continue;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error('stream ended');
      buf += value;
    }
  };
}

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
    const ac = new AbortController();
    const res = await fetch(gw.url(), {
      method: 'POST',
      headers: { ...HEADERS, 'mcp-method': 'subscriptions/listen' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'listen-1', method: 'subscriptions/listen', params: { notifications: { toolsListChanged: true, promptsListChanged: true }, _meta: META } }),
      signal: ac.signal,
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
    const next = sseMessages(res.body!);
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
    ac.abort();
  });
});
