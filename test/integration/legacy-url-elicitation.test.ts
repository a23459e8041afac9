// 2025-11-25 added URL-mode elicitation, with the -32042 error (URLElicitationRequired: open these URLs, then
// retry) and notifications/elicitation/complete. A 2025-06-18 or 2025-03-26 client knows neither: the
// gateway put an upstream's -32042 to it as it came (a code its revision does not define, the URL only in
// `data`, which such a client does not read) and sent it the notification its revision has no method for.
// Such a session gets a -32000 whose message names the URL, and no notifications/elicitation/complete; a
// 2025-11-25 session still gets both as the upstream sent them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { openSession, post, type Json } from '../helpers/http-edge.js';

const UPSTREAM = { name: 'url', transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/url-elicitation-server.mjs'], sandbox: 'none' as const, sharing: 'shared' as const };
const CONSENT_URL = 'https://example.com/consent/e1';

/** Every JSON-RPC message of a POST's answer, whether JSON or an SSE stream. */
async function messages(res: Response): Promise<Json[]> {
  const text = await res.text();
  assert.equal(res.status, 200, text);
  if ((res.headers.get('content-type') ?? '').startsWith('application/json')) return [JSON.parse(text) as Json];
  return text
    .split('\n')
    .filter((l) => l.startsWith('data:') && l.slice(5).trim() !== '') // not the priming event's empty data
    .map((l) => JSON.parse(l.slice(5)) as Json);
}

async function call(gw: RunningGateway, version: string, tool: string): Promise<Json[]> {
  const s = await openSession(gw, version, { elicitation: { form: {}, url: {} } });
  assert.equal(s.version, version);
  return messages(await post(gw, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: tool, arguments: {} } }, { sid: s.sid, version }));
}

describe('URL-mode elicitation for a 2025 session whose revision lacks it', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({ pinning: { mode: 'off' }, upstreams: [UPSTREAM], endpoints: [{ path: '/mcp', upstreams: ['url'] }] });
  });
  after(() => gw.close());

  for (const version of ['2025-06-18', '2025-03-26']) {
    it(`${version}: an upstream's -32042 arrives as -32000 naming the URL`, async () => {
      const answer = (await call(gw, version, 'needs_url')).find((m) => m.id === 2);
      assert.ok(answer?.error, JSON.stringify(answer));
      assert.equal(answer.error.code, -32000);
      assert.ok(answer.error.message.includes(CONSENT_URL), answer.error.message);
      assert.ok(answer.error.message.includes('This request requires more information.'), answer.error.message);
    });

    it(`${version}: no notifications/elicitation/complete`, async () => {
      const all = await call(gw, version, 'url_done');
      assert.equal(all.find((m) => m.id === 2)?.result?.content?.[0]?.text, 'done', JSON.stringify(all));
      assert.deepEqual(all.filter((m) => m.method === 'notifications/elicitation/complete'), []);
    });
  }

  it('2025-11-25: both as the upstream sent them', async () => {
    const refused = (await call(gw, '2025-11-25', 'needs_url')).find((m) => m.id === 2);
    assert.equal(refused?.error?.code, -32042, JSON.stringify(refused));
    assert.equal(refused.error.data.elicitations[0].url, CONSENT_URL);
    const all = await call(gw, '2025-11-25', 'url_done');
    assert.deepEqual(all.filter((m) => m.method === 'notifications/elicitation/complete').map((m) => m.params), [{ elicitationId: 'e1' }]);
  });
});
