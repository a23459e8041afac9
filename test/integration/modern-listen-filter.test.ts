// subscriptions/listen's filter is typed by the schema: three booleans and an array of URI strings. The gateway
// read the flags as truthy, so `toolsListChanged: "false"` (a string) was honoured and acknowledged as `true`,
// and the client was sent the notifications it had asked not to get; a `resourceSubscriptions` that was one
// string, not a list, was acknowledged without it and never delivered. Such a filter is now refused 400 -32602
// naming the member, as a listen without `notifications` is (and as the official SDK's server refuses it).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { MODERN_VERSION, openListen } from '../helpers/modern-http.js';

/** A listen POST's status and, when it is no stream (before the fix a wrong filter opened one, never ending), its body. */
async function listenAnswer(url: URL, id: number, notifications: Record<string, unknown>): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'subscriptions/listen' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { notifications, _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION, 'io.modelcontextprotocol/clientCapabilities': {} } } }),
  });
  if ((res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    await res.body?.cancel();
    return { status: res.status, body: 'an SSE stream' };
  }
  return { status: res.status, body: await res.json() };
}

describe('2026-07-28: a subscriptions/listen filter of the wrong types', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
  });
  after(() => gw.close());

  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['a string flag', { toolsListChanged: 'false' }, /toolsListChanged/],
    ['a numeric flag', { promptsListChanged: 1 }, /promptsListChanged/],
    ['one URI instead of a list', { resourceSubscriptions: 'test://watched-resource' }, /resourceSubscriptions/],
    ['a list with a non-string', { resourceSubscriptions: ['test://watched-resource', 7] }, /resourceSubscriptions/],
  ];
  for (const [what, notifications, member] of cases) {
    it(`refuses ${what} with 400 -32602 naming it`, async () => {
      const r = await listenAnswer(gw.url(), 1, notifications);
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.error?.code, -32602, JSON.stringify(r.body));
      assert.match(r.body.error.message, member);
      assert.equal(r.body.id, 1);
    });
  }

  it('a well-typed filter is acknowledged', async () => {
    const l = await openListen(gw.url(), 'ok', { toolsListChanged: true, promptsListChanged: false, resourceSubscriptions: [] });
    try {
      assert.equal(l.status, 200);
      const ack = await l.next();
      assert.equal(ack.method, 'notifications/subscriptions/acknowledged');
      assert.equal(ack.params.notifications.toolsListChanged, true);
      assert.equal(ack.params.notifications.promptsListChanged, undefined);
    } finally {
      l.close();
    }
  });
});
