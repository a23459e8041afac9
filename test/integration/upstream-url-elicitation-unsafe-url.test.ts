// An upstream's URL elicitation (elicitation/create in URL mode, a 2026-07-28 upstream's input request, a
// -32042's data.elicitations) was relayed with its url unchecked (found by a review, 2026-12-08): a client
// opens it in the user's browser, so a hostile upstream could send javascript:, data:text/html, file:, a
// relative string, https://user:pass@host or a URL holding a bidi override that reads as another host. Now
// only an absolute https: URL (http: to a loopback host) without credentials or unseen characters is
// relayed: a 2025 upstream's ask is answered -32602, a 2026-07-28 upstream's round and a -32042 fail the
// call with SWB_UPSTREAM_PROTOCOL, a warn line is logged, and the user is asked nothing. A real gateway on a
// real port, the stdio URL fixture and the params-recording fixture (both eras), the SDK client and raw POSTs.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startAskedGateway } from '../helpers/asked-gateway.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { openSession, post, type Json } from '../helpers/http-edge.js';
import { inputRound, modernPost } from '../helpers/modern-http.js';
import { textOf } from '../helpers/sdk.js';

/** What no user should be sent to; `undefined`: a URL elicitation with no url at all. */
const HOSTILE: Array<string | undefined> = [
  'javascript:alert(document.cookie)',
  'data:text/html,<script>alert(1)</script>',
  'file:///etc/passwd',
  'not a url',
  '/oauth/start?flow=x',
  'https://user:pass@example.com/consent',
  'https://bank.example\u202e/moc.live',
  'https://exa\u200bmple.com/consent',
  'http://example.com/consent',
  undefined,
];
/** What is relayed: https anywhere, plain http to loopback alone. */
const FINE = ['https://example.com/consent/e1', 'http://localhost:8765/cb', 'http://127.0.0.1:9/cb', 'http://[::1]:9/cb'];

describe("an upstream's URL elicitation whose url is no https (or loopback http) URL", { timeout: 90_000 }, () => {
  let gw: RunningGateway;
  let client: Client;
  const lines: string[] = [];
  const asked: Json[] = [];

  before(async () => {
    ({ gw, client } = await startAskedGateway({ url: true, config: { pinning: { mode: 'off' } }, urlClient: 'unsafe-url-test', lines, asked }));
  });
  after(async () => {
    await client?.close();
    await gw?.close();
  });

  const caps = { elicitation: { form: {}, url: {} } };
  const urlAsk = (url: string | undefined) => ({ mode: 'url', elicitationId: 'x1', message: 'Sign in to go on', ...(url === undefined ? {} : { url }) });
  /** The answer a 2025-11-25 session gets to needs_url naming `url`. */
  async function call2025(url: string): Promise<Json> {
    const s = await openSession(gw, '2025-11-25', caps);
    const res = await post(gw, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'url__needs_url', arguments: { url } } }, { sid: s.sid, version: '2025-11-25' });
    const text = await res.text();
    const json = (res.headers.get('content-type') ?? '').startsWith('application/json') ? [JSON.parse(text)] : text.split('\n').filter((l) => l.startsWith('data:') && l.slice(5).trim() !== '').map((l) => JSON.parse(l.slice(5)));
    return json.find((m: Json) => m.id === 2);
  }
  const warned = () => lines.map((l) => JSON.parse(l) as Json).filter((l) => l.level === 40 && /URL is not one to open/.test(String(l.msg)));

  it("a 2025 upstream's elicitation/create is answered -32602, for clients of both eras, and put to no one", async () => {
    asked.length = 0;
    const before = warned().length;
    for (const url of HOSTILE) {
      const answered = JSON.parse(textOf(await client.callTool({ name: 'legacy__ask', arguments: { method: 'elicitation/create', params: urlAsk(url) } })));
      assert.equal(answered.error?.code, -32602, `${url}: ${JSON.stringify(answered)}`);
      assert.equal(answered.error.data?.field, 'url', `${url}: the gateway's refusal, not the client's`);
      const modern = await modernPost(gw.url(), 'tools/call', { name: 'legacy__ask', arguments: { method: 'elicitation/create', params: urlAsk(url) } }, { caps });
      assert.equal(modern.body.result?.resultType, 'complete', `${url}: no round: ${JSON.stringify(modern.body)}`);
      assert.equal(JSON.parse(modern.body.result.content[0].text).error?.code, -32602);
    }
    assert.deepEqual(asked, [], 'the user was asked nothing');
    assert.equal(warned().length - before, HOSTILE.length * 2);
    assert.equal(warned().at(-1)!.upstream, 'legacy');
  });

  it("a 2026-07-28 upstream's input round fails the call with SWB_UPSTREAM_PROTOCOL, for clients of both eras", async () => {
    asked.length = 0;
    const before = warned().length;
    for (const url of HOSTILE) {
      const err = await client.callTool({ name: 'modern__ask', arguments: { method: 'elicitation/create', params: urlAsk(url) } }).then(
        (r) => assert.fail(`${url}: answered ${JSON.stringify(r)}`),
        (e: { data?: Json }) => e,
      );
      assert.equal(err.data?.code, 'SWB_UPSTREAM_PROTOCOL', `${url}: ${JSON.stringify(err)}`);
      const modern = await modernPost(gw.url(), 'tools/call', { name: 'modern__ask', arguments: { method: 'elicitation/create', params: urlAsk(url) } }, { caps });
      assert.equal(modern.body.error?.data?.code, 'SWB_UPSTREAM_PROTOCOL', `${url}: ${JSON.stringify(modern.body)}`);
      assert.match(modern.body.error.message, /inputRequests\["k"\]\.params\.url/);
    }
    assert.deepEqual(asked, [], 'the user was asked nothing');
    assert.equal(warned().length - before, HOSTILE.length * 2);
    assert.equal(warned().at(-1)!.upstream, 'modern');
  });

  it('a -32042 naming such a URL fails the call with SWB_UPSTREAM_PROTOCOL, in both client eras, its URL shown to no one', async () => {
    const before = warned().length;
    for (const url of HOSTILE) {
      const eleven = await call2025(url ?? '');
      assert.equal(eleven?.error?.data?.code, 'SWB_UPSTREAM_PROTOCOL', `${url}: ${JSON.stringify(eleven)}`);
      assert.equal(eleven.error.data.field, 'error.data.elicitations[0].url');
      assert.equal(eleven.error.data.elicitations, undefined, 'the link is not shown');
      const modern = await modernPost(gw.url(), 'tools/call', { name: 'url__needs_url', arguments: { url: url ?? '' } }, { caps });
      assert.equal(modern.body.result, undefined, 'no URL round');
      assert.equal(modern.body.error?.data?.code, 'SWB_UPSTREAM_PROTOCOL', `${url}: ${JSON.stringify(modern.body)}`);
    }
    assert.equal(warned().length - before, HOSTILE.length * 2);
    assert.equal(warned().at(-1)!.upstream, 'url');
  });

  it('an https URL, or http to loopback, is relayed on every path', async () => {
    asked.length = 0;
    for (const url of FINE) {
      const answered = JSON.parse(textOf(await client.callTool({ name: 'legacy__ask', arguments: { method: 'elicitation/create', params: urlAsk(url) } })));
      assert.equal(answered.result?.action, 'decline', `${url}: ${JSON.stringify(answered)}`);
      const round = inputRound(await modernPost(gw.url(), 'tools/call', { name: 'modern__ask', arguments: { method: 'elicitation/create', params: urlAsk(url) } }, { caps }));
      assert.equal(round.params.url, url);
      const eleven = await call2025(url);
      assert.equal(eleven?.error?.code, -32042, `${url}: ${JSON.stringify(eleven)}`);
      assert.equal(eleven.error.data.elicitations[0].url, url);
    }
    assert.deepEqual(asked.map((p) => p.url), FINE);
  });
});
