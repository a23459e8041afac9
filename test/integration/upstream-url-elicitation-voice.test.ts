// An upstream's -32042 (URLElicitationRequired: open these URLs, then retry) puts its URL elicitations to
// the user as an elicitation/create does: a 2026-07-28 client as a URL round, a 2025-11-25 client in the
// error's data, an older revision in the error's message. Before, their messages reached the user as the
// upstream wrote them, while its elicitation/create was marked (`Upstream "<name>" asks: `) and refused in
// the gateway's voice: a -32042 saying "Switchboard asks you to confirm… open this link and sign in" read as
// the gateway's own question. Now each is marked with its upstream, and one in the gateway's voice (its
// elicitations' messages or the error's own) is refused: the call answers SWB_ELICITATION_REFUSED, a warn
// line and a metric, and nothing of it is shown. A real gateway on a real port, the stdio URL fixture.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { openSession, post, type Json } from '../helpers/http-edge.js';
import { inputRound, modernPost } from '../helpers/modern-http.js';

const UPSTREAM = { name: 'url', transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/url-elicitation-server.mjs'], sandbox: 'none' as const, sharing: 'shared' as const };
const CONSENT_URL = 'https://example.com/consent/e1';
const MARKED = 'Upstream "url" asks: Approve access in your browser';
const COPIED = 'Switchboard asks you to confirm this tool call before it is sent. Sign in at the link to go on.';

describe("an upstream's URL elicitations (-32042), told from the gateway's own questions", { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  const lines: string[] = [];

  before(async () => {
    gw = await startGateway({ pinning: { mode: 'off' }, upstreams: [UPSTREAM], endpoints: [{ path: '/mcp', upstreams: ['url'] }] }, { logLines: lines });
  });
  after(() => gw?.close());

  /** The answer a 2025 session of `version` gets to needs_url with `args`. */
  async function call2025(version: string, args: Json): Promise<Json> {
    const s = await openSession(gw, version, { elicitation: { form: {}, url: {} } });
    const res = await post(gw, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'needs_url', arguments: args } }, { sid: s.sid, version });
    const text = await res.text();
    const json = (res.headers.get('content-type') ?? '').startsWith('application/json') ? [JSON.parse(text)] : text.split('\n').filter((l) => l.startsWith('data:') && l.slice(5).trim() !== '').map((l) => JSON.parse(l.slice(5)));
    return json.find((m: Json) => m.id === 2);
  }
  const callModern = (args: Json) => modernPost(gw.url(), 'tools/call', { name: 'needs_url', arguments: args }, { caps: { elicitation: { form: {}, url: {} } } });
  const refusals = async () => {
    const text = await (await fetch(gw.app.metricsUrl!)).text();
    const line = text.split('\n').find((l) => l.startsWith('switchboard_upstream_elicitations_refused_total{') && l.includes('upstream="url"') && l.includes('reason="gateway_wording"'));
    return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
  };

  it('a 2025-11-25 client gets the elicitation marked with its upstream, its URL as it was', async () => {
    const answer = await call2025('2025-11-25', {});
    assert.equal(answer?.error?.code, -32042, JSON.stringify(answer));
    assert.deepEqual(answer.error.data.elicitations, [{ mode: 'url', elicitationId: 'e1', url: CONSENT_URL, message: MARKED }]);
  });

  it('a 2025-06-18 client reads it marked in the error message', async () => {
    const answer = await call2025('2025-06-18', {});
    assert.equal(answer?.error?.code, -32000, JSON.stringify(answer));
    assert.ok(answer.error.message.includes(`${CONSENT_URL} (${MARKED})`), answer.error.message);
  });

  it('a 2026-07-28 client is asked a URL round marked with its upstream', async () => {
    const round = inputRound(await callModern({}));
    assert.equal(round.params.mode, 'url');
    assert.equal(round.params.url, CONSENT_URL);
    assert.equal(round.params.message, MARKED);
  });

  it('one without a message is still marked with its upstream, in every era', async () => {
    // Before, it reached a 2025 client with no message, and a 2026-07-28 one as "Open this link to continue", from no one.
    const unsaid = 'Upstream "url" asks: Open this link to continue';
    const eleven = await call2025('2025-11-25', { message: null });
    assert.deepEqual(eleven?.error?.data?.elicitations, [{ mode: 'url', elicitationId: 'e1', url: CONSENT_URL, message: unsaid }], JSON.stringify(eleven));
    const old = await call2025('2025-06-18', { message: null });
    assert.ok(String(old?.error?.message).includes(`${CONSENT_URL} (${unsaid})`), JSON.stringify(old));
    const round = inputRound(await callModern({ message: null }));
    assert.equal(round.params.url, CONSENT_URL);
    assert.equal(round.params.message, unsaid);
  });

  it("one in the gateway's voice is shown to no one: the call answers why, logged, counted", async () => {
    const before = await refusals();
    const eleven = await call2025('2025-11-25', { message: COPIED });
    assert.equal(eleven?.error?.data?.code, 'SWB_ELICITATION_REFUSED', JSON.stringify(eleven));
    assert.equal(eleven.error.data.field, 'error.data.elicitations[0].message');
    assert.equal(JSON.stringify(eleven).includes(CONSENT_URL), false, 'the URL is not shown');
    // Zero-width space and other case: as the user reads it.
    const old = await call2025('2025-06-18', { message: 'SWITCH\u200bBOARD  asks you to sign in' });
    assert.equal(old?.error?.data?.code, 'SWB_ELICITATION_REFUSED', JSON.stringify(old));
    assert.equal(old.error.message.includes(CONSENT_URL), false, old.error.message);
    const modern = await callModern({ error: COPIED });
    assert.equal(modern.body.result, undefined, 'no URL round');
    assert.equal(modern.body.error?.data?.code, 'SWB_ELICITATION_REFUSED', JSON.stringify(modern.body));
    assert.equal(modern.body.error.data.field, 'error.message');
    assert.equal((await refusals()) - before, 3);
    const warned = lines.map((l) => JSON.parse(l) as Json).filter((l) => l.level === 40 && /elicitation refused/.test(l.msg));
    assert.deepEqual(warned.map((l) => l.upstream), ['url', 'url', 'url']);
  });
});

describe("an upstream's URL elicitations (-32042) are scanned for hidden text, whatever they answer", { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({ pinning: { mode: 'off' }, upstreams: [UPSTREAM], endpoints: [{ path: '/mcp', upstreams: ['url'], guardrails: { hiddenText: { results: 'block' } } }] });
  });
  after(() => gw?.close());

  async function answerTo(method: string, params: Json): Promise<Json> {
    const s = await openSession(gw, '2025-11-25', { elicitation: { form: {}, url: {} } });
    const res = await post(gw, { jsonrpc: '2.0', id: 2, method, params }, { sid: s.sid, version: '2025-11-25' });
    const text = await res.text();
    const json = (res.headers.get('content-type') ?? '').startsWith('application/json') ? [JSON.parse(text)] : text.split('\n').filter((l) => l.startsWith('data:') && l.slice(5).trim() !== '').map((l) => JSON.parse(l.slice(5)));
    return json.find((m: Json) => m.id === 2);
  }

  it('a tools/call one with hidden text is blocked, as an elicitation/create is', async () => {
    const answer = await answerTo('tools/call', { name: 'needs_url', arguments: { message: 'Approve\u200b access' } });
    assert.equal(answer?.error?.data?.code, 'SWB_HIDDEN_TEXT_BLOCKED', JSON.stringify(answer));
  });

  it('so is one a resources/subscribe is answered with; one without hidden text is relayed, marked', async () => {
    const hidden = await answerTo('resources/subscribe', { uri: 'test://hidden' });
    assert.equal(hidden?.error?.data?.code, 'SWB_HIDDEN_TEXT_BLOCKED', JSON.stringify(hidden));
    const plain = await answerTo('resources/subscribe', { uri: 'test://a' });
    assert.equal(plain?.error?.code, -32042, JSON.stringify(plain));
    assert.equal(plain.error.data.elicitations[0].message, MARKED);
  });
});
