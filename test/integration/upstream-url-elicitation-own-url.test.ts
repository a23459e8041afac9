// An upstream's URL elicitation (a -32042's, or elicitation/create in URL mode) whose URL is the gateway's
// own (under server.publicUrl) was relayed as any other: only its wording was checked (found by a review,
// 2026-12-07). The gateway's own URL elicitations are its consent links (/oauth/start), so such a link from
// an upstream passes for that flow, another user's consent link among them (a COAT link, given to a user
// its owner never answered). Now it is refused as one in the gateway's voice is: SWB_ELICITATION_REFUSED
// naming the url field, a warn line, the metric with reason "gateway_url"; nothing put to the user. A URL
// elsewhere (another path of the host, another port) is relayed, marked. A real gateway on a real port, the
// stdio URL fixture and the params-recording fixture (a 2025 and a 2026-07-28 upstream), both client eras.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startAskedGateway } from '../helpers/asked-gateway.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { openSession, post, type Json } from '../helpers/http-edge.js';
import { inputRound, modernPost } from '../helpers/modern-http.js';
import { textOf } from '../helpers/sdk.js';

const OWN = 'https://gw.example/mcp-gw/oauth/start?flow=someone-elses';
/** The same place, written otherwise: upper case, a trailing dot, an escaped letter, plain http (a proxy redirects). */
const DISGUISED = ['https://GW.example./mcp-gw/%6Fauth/start?flow=x', 'http://gw.example/mcp-gw/oauth/start?flow=x', 'https://gw.example:443/mcp-gw/x/../oauth/start'];
/** Not the gateway's: another path of its host, another port. */
const ELSEWHERE = ['https://gw.example/other/consent', 'https://gw.example:8443/mcp-gw/oauth/start', 'https://example.com/consent/e1'];

describe("an upstream's URL elicitation leading to the gateway's own pages", { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let client: Client;
  const lines: string[] = [];
  const asked: Json[] = [];

  before(async () => {
    const config = { server: { publicUrl: 'https://gw.example/mcp-gw' }, pinning: { mode: 'off' as const } };
    ({ gw, client } = await startAskedGateway({ url: true, config, urlClient: 'own-url-test', lines, asked }));
  });
  after(async () => {
    await client?.close();
    await gw?.close();
  });

  /** The answer a 2025-11-25 session gets to needs_url naming `url`. */
  async function call2025(url: string): Promise<Json> {
    const s = await openSession(gw, '2025-11-25', { elicitation: { form: {}, url: {} } });
    const res = await post(gw, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'url__needs_url', arguments: { url } } }, { sid: s.sid, version: '2025-11-25' });
    const text = await res.text();
    const json = (res.headers.get('content-type') ?? '').startsWith('application/json') ? [JSON.parse(text)] : text.split('\n').filter((l) => l.startsWith('data:') && l.slice(5).trim() !== '').map((l) => JSON.parse(l.slice(5)));
    return json.find((m: Json) => m.id === 2);
  }
  const callModern = (url: string) => modernPost(gw.url(), 'tools/call', { name: 'url__needs_url', arguments: { url } }, { caps: { elicitation: { form: {}, url: {} } } });
  const urlAsk = (url: string) => ({ mode: 'url', elicitationId: 'x1', url, message: 'Sign in to go on' });
  const refusals = async () => {
    const text = await (await fetch(gw.app.metricsUrl!)).text();
    return text.split('\n').filter((l) => l.startsWith('switchboard_upstream_elicitations_refused_total{') && l.includes('reason="gateway_url"')).reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  };

  it('a -32042 naming the gateway\'s own URL is refused, in both client eras, however the URL is written', async () => {
    const before = await refusals();
    for (const url of [OWN, ...DISGUISED]) {
      const eleven = await call2025(url);
      assert.equal(eleven?.error?.data?.code, 'SWB_ELICITATION_REFUSED', `${url}: ${JSON.stringify(eleven)}`);
      assert.equal(eleven.error.data.field, 'error.data.elicitations[0].url');
      assert.equal(JSON.stringify(eleven).includes('flow='), false, 'the link is not shown');
    }
    const modern = await callModern(OWN);
    assert.equal(modern.body.result, undefined, 'no URL round');
    assert.equal(modern.body.error?.data?.code, 'SWB_ELICITATION_REFUSED', JSON.stringify(modern.body));
    assert.equal((await refusals()) - before, DISGUISED.length + 2);
    const warned = lines.map((l) => JSON.parse(l) as Json).filter((l) => l.level === 40 && l.msg === "upstream elicitation refused: its URL is the gateway's own");
    assert.equal(warned.length, DISGUISED.length + 2);
    assert.equal(warned[0]!.upstream, 'url');
  });

  it('a URL elsewhere is relayed, marked with its upstream', async () => {
    for (const url of ELSEWHERE) {
      const eleven = await call2025(url);
      assert.equal(eleven?.error?.code, -32042, `${url}: ${JSON.stringify(eleven)}`);
      assert.equal(eleven.error.data.elicitations[0].url, url);
    }
    const round = inputRound(await callModern(ELSEWHERE[0]!));
    assert.equal(round.params.url, ELSEWHERE[0]);
    assert.match(round.params.message, /^Upstream "url" asks: /);
  });

  it('elicitation/create in URL mode: refused to the upstream, whichever era it speaks, and put to no one', async () => {
    asked.length = 0;
    const answered = JSON.parse(textOf(await client.callTool({ name: 'legacy__ask', arguments: { method: 'elicitation/create', params: urlAsk(OWN) } })));
    assert.equal(answered.error?.data?.code, 'SWB_ELICITATION_REFUSED', JSON.stringify(answered));
    assert.equal(answered.error.data.field, 'url');
    await assert.rejects(client.callTool({ name: 'modern__ask', arguments: { method: 'elicitation/create', params: urlAsk(OWN) } }).then((r) => assert.fail(`answered: ${JSON.stringify(r)}`)), /SWB_ELICITATION_REFUSED|refused/);
    assert.deepEqual(asked, [], 'the user was asked nothing');
  });
});
