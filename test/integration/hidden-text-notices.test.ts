// An upstream's log lines (notifications/message) and progress messages are text a host shows its user
// and may give its model: before 2026-12-06 they passed hidden-text scanning unscanned. Now scanned with
// the results' action: relayed as they are (audit), cleaned (strip), or withheld (block), for a 2025 session
// and for a 2026-07-28 client alike.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CreateMessageRequestSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { gatewayWithClients } from '../helpers/gateway-clients.js';
import { HIDDEN_TEXT, HIDDEN_TEXT_UPSTREAM, RESULTS_ENDPOINTS } from '../helpers/hidden-text-fixture.js';
import { modernPost } from '../helpers/modern-http.js';
import { textOf } from '../helpers/sdk.js';

type Json = Record<string, any>;
const F = HIDDEN_TEXT;

describe('hidden-text scanning of log lines and progress messages', () => {
  const rig = gatewayWithClients({
    upstreams: [HIDDEN_TEXT_UPSTREAM],
    endpoints: RESULTS_ENDPOINTS,
  });
  const { lines, clients } = rig;
  /** The log data and progress messages one call on `path` brought its client. */
  const notices = async (path: string, kind: string) => {
    const c = clients[path]!;
    const logs: unknown[] = [];
    const progress: unknown[] = [];
    c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params.data));
    await c.setLoggingLevel('debug');
    const r = await c.callTool({ name: 'reply', arguments: { kind, where: 'notices' } }, undefined, { onprogress: (p) => void progress.push(p.message) });
    assert.equal(textOf(r), 'noticed');
    return { logs, progress };
  };
  const audited = (path: string) => lines.map((l) => JSON.parse(l) as Json).filter((l) => l.event === 'hidden_text' && l.endpoint === path && (l.item === 'log' || l.item === 'progress'));

  // Each audit line names the upstream that sent the notice (before 2026-12-06 none did: `upstream` was absent).
  it('off and audit relay them as they are; audit writes a line for each, naming the upstream', async () => {
    assert.deepEqual(await notices('/off', 'tag'), { logs: [F.samples.tag], progress: [F.samples.tag] });
    assert.deepEqual(await notices('/audit', 'tag'), { logs: [F.samples.tag], progress: [F.samples.tag] });
    assert.deepEqual(audited('/audit').map((l) => [l.item, l.action, l.upstream, l.findings.map((f: Json) => `${f.kind} ${f.path}`)]).sort(), [
      ['log', 'audit', 'ht', ['tag data']],
      ['progress', 'audit', 'ht', ['tag message']],
    ]);
  });

  it('strip relays them cleaned; block withholds them, and the call itself is answered', async () => {
    assert.deepEqual(await notices('/strip', 'tag'), { logs: ['Sunny, 21 degrees.'], progress: ['Sunny, 21 degrees.'] });
    assert.deepEqual(await notices('/block', 'bidi'), { logs: [], progress: [] });
    assert.deepEqual(await notices('/block', 'none'), { logs: [F.samples.none], progress: [F.samples.none] });
  });

  // A 2026-07-28 client names its log level and progress token per request (_meta); the gateway relays
  // the upstream's log lines and progress on that request's stream, screened as a 2025 session's are.
  /** The log data and progress messages a 2026-07-28 call on `path` brought on its answer's stream. */
  const modernNotices = async (path: string, kind: string) => {
    const meta = { 'io.modelcontextprotocol/logLevel': 'debug', progressToken: `p-${path}-${kind}` };
    const a = await modernPost(rig.gw.url(path), 'tools/call', { name: 'reply', arguments: { kind, where: 'notices' } }, { meta });
    assert.equal(a.body.result?.content?.[0]?.text, 'noticed', JSON.stringify(a.messages));
    const of = (method: string) => a.messages.filter((m) => m.method === method);
    for (const p of of('notifications/progress')) assert.equal(p.params.progressToken, meta.progressToken);
    return { logs: of('notifications/message').map((m) => m.params.data), progress: of('notifications/progress').map((m) => m.params.message) };
  };

  it('a 2026-07-28 client: off and audit relay them as they are, strip cleans them, block withholds them', async () => {
    const before = audited('/audit').length;
    assert.deepEqual(await modernNotices('/off', 'tag'), { logs: [F.samples.tag], progress: [F.samples.tag] });
    assert.deepEqual(await modernNotices('/audit', 'tag'), { logs: [F.samples.tag], progress: [F.samples.tag] });
    assert.deepEqual(audited('/audit').slice(before).map((l) => [l.item, l.action, l.upstream, l.findings.map((f: Json) => `${f.kind} ${f.path}`)]).sort(), [
      ['log', 'audit', 'ht', ['tag data']],
      ['progress', 'audit', 'ht', ['tag message']],
    ]);
    assert.deepEqual(await modernNotices('/strip', 'tag'), { logs: ['Sunny, 21 degrees.'], progress: ['Sunny, 21 degrees.'] });
    assert.deepEqual(await modernNotices('/block', 'bidi'), { logs: [], progress: [] });
    assert.deepEqual(await modernNotices('/block', 'none'), { logs: [F.samples.none], progress: [F.samples.none] });
  });

  // An upstream that cancels the sampling request it relayed gives a reason, which the gateway passes on in its
  // own notifications/cancelled to the client, and a client MAY show its user: before 2026-12-08 it went unscanned.
  /** The reason the client of `path` is given when the upstream cancels its sampling request with `kind`'s sample. */
  const cancelReason = async (path: string, kind: string) => {
    const c = clients[path]!;
    let told!: (reason: unknown) => void;
    const reason = new Promise<unknown>((resolve) => (told = resolve));
    c.setRequestHandler(CreateMessageRequestSchema, async (_req, extra) => {
      extra.signal.addEventListener('abort', () => told(extra.signal.reason));
      // Asked, the client has the upstream cancel what it asked (a second call, while this one waits).
      assert.equal(textOf(await c.callTool({ name: 'reply', arguments: { kind, where: 'cancel' } })), 'cancelled it');
      await reason; // answered before the cancellation came, the client would no longer know the request
      return { model: 'm', role: 'assistant', content: { type: 'text', text: 'late' } };
    });
    assert.equal(textOf(await c.callTool({ name: 'reply', arguments: { kind, where: 'cancelled' } })), 'sampling cancelled');
    return reason;
  };

  it("an upstream's cancel reason for what it asked the client: relayed as it is (off), cleaned (strip), or left out (block)", async () => {
    assert.equal(await cancelReason('/off', 'tag'), F.samples.tag);
    assert.equal(await cancelReason('/strip', 'tag'), 'Sunny, 21 degrees.');
    assert.equal(await cancelReason('/block', 'bidi'), 'cancelled');
    assert.equal(await cancelReason('/block', 'none'), F.samples.none);
  });
});
