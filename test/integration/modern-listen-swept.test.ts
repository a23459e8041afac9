// A subscriptions/listen whose resource subscriptions were on their way upstream left its standing looking
// idle (no call in flight, no listener yet, and finding a standing does not count as activity): the idle sweep
// closed it under the listen, which then registered on the ended standing. Its client was acknowledged and
// then heard nothing, for as long as it kept the stream open. The stream being set up now keeps its standing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { Journal, MODERN_VERSION, modernPost, openListen } from '../helpers/modern-http.js';
import { until, waitFor, withClockAhead } from '../helpers/wait.js';

describe('2026-07-28: the idle sweep while a listen subscribes', () => {
  let gw: RunningGateway;
  const journal = new Journal();
  before(async () => {
    gw = await startGateway({
      session: { idleTimeoutMs: 1000 },
      upstreams: [{ name: 'held', transport: 'stdio', command: process.execPath, args: ['test/fixtures/held-subscribe-server.mjs', '--journal', journal.file], sandbox: 'none', sharing: 'shared', pool: { size: 1 } }],
      endpoints: [
        { path: '/mcp', upstreams: ['held'] },
        { path: '/other', upstreams: ['held'] },
      ],
    });
  });
  after(() => gw.close());

  const call = async (name: string) => {
    const r = await modernPost(gw.url('/other'), 'tools/call', { name, arguments: {} });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  };

  it('leaves the standing alone, and the listen hears the update of the resource it subscribed', async () => {
    const standings = gw.app.gateway.modern.sessions;
    // A standing elsewhere, idle too: once it is swept, a sweep has looked at the listen's standing.
    await call('release');
    const opening = openListen(gw.url('/mcp'), 'listen-swept', { resourceSubscriptions: ['test://held'] });
    await until('the subscription reached the upstream', () => journal.all().some((m) => m.method === 'resources/subscribe'));
    await withClockAhead(60_000, () => until('a sweep', () => !standings.list().some((s) => s.endpoint.config.path === '/other'), 10_000));
    await call('release');
    const listen = await opening;
    try {
      const ack = await listen.next();
      assert.equal(ack.method, 'notifications/subscriptions/acknowledged');
      assert.deepEqual(ack.params.notifications.resourceSubscriptions, ['test://held']);
      assert.ok(standings.list().some((s) => s.endpoint.config.path === '/mcp' && !s.closed), 'the listen\'s standing is still open');
      await call('touch');
      const heard = await Promise.race([listen.next(), waitFor(() => false, { timeoutMs: 10_000 }).then(() => 'nothing within 10 s')]);
      assert.equal(heard?.method, 'notifications/resources/updated', JSON.stringify(heard));
      assert.equal(heard.params.uri, 'test://held');
    } finally {
      listen.close();
    }
  });

  it('answers a listen whose standing an operator ended while it subscribed, rather than leave it on the ended standing', async () => {
    const standings = gw.app.gateway.modern.sessions;
    const mark = journal.mark();
    const body = { jsonrpc: '2.0', id: 'listen-ended', method: 'subscriptions/listen', params: { notifications: { resourceSubscriptions: ['test://second'] }, _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION, 'io.modelcontextprotocol/clientCapabilities': {} } } };
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'subscriptions/listen' };
    // Another URI than the first test's (whose stream may still be closing): this one is subscribed upstream.
    // Bounded: on the ended standing the stream was acknowledged and then stayed open, saying nothing.
    const answer = fetch(gw.url('/mcp'), { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(20_000) }).then(async (r) => ({ status: r.status, text: await r.text() }));
    await until('the subscription reached the upstream', () => journal.since(mark).some((m) => m.method === 'resources/subscribe'));
    const standing = standings.list().find((s) => s.endpoint.config.path === '/mcp');
    assert.ok(standing);
    assert.equal(await standings.end(standing.id), true);
    await call('release');
    const { status, text } = await answer;
    assert.equal(status, 200, text);
    const last = JSON.parse(text.split('\n').filter((l) => l.startsWith('data: ')).at(-1)?.slice(6) ?? text);
    assert.equal(last.id, 'listen-ended');
    assert.match(last.error?.message ?? '', /send subscriptions\/listen again/, text);
  });
});
