// The admin API's refusal warnings named the request's `url` as sent, query string and all: a request
// refused for carrying its token in the query (refusePlacement) wrote that token, the operator's own, into
// the log, and every log store it was shipped to. They now name the path alone. Found by a review.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';

const STATIC = 'admin-refusal-log-query-0123456789-abcdefgh';

describe('admin API refusals: logged without the query string', () => {
  const lines: string[] = [];
  let gw: RunningGateway;

  before(async () => {
    gw = await startGateway(
      {
        admin: { enabled: true, host: '127.0.0.1', port: 0, token: STATIC },
        upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
        endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
      },
      { logLines: lines },
    );
  });
  after(async () => {
    await gw?.close();
  });

  const refusals = () => lines.filter((l) => l.includes('admin API request refused')).map((l) => JSON.parse(l) as Record<string, unknown>);

  it('a token in the query is refused 400 and logged by its path, the token nowhere in the log', async () => {
    const r = await fetch(new URL(`/sessions?access_token=${STATIC}&subject=alice`, gw.app.adminUrl!), { headers: { authorization: `Bearer ${STATIC}` } });
    assert.equal(r.status, 400);
    const [line] = refusals();
    assert.ok(line, lines.join('\n'));
    assert.equal(line.url, '/sessions');
    assert.ok(!lines.some((l) => l.includes(STATIC)), 'the token was logged');
  });

  it('a cross-site request is logged by its path too', async () => {
    const before = refusals().length;
    const r = await fetch(new URL('/sessions?code=secret-code-1234&state=secret-state-5678', gw.app.adminUrl!), { headers: { origin: 'https://elsewhere.test', 'sec-fetch-site': 'cross-site' } });
    assert.equal(r.status, 403);
    const line = refusals()[before];
    assert.equal(line?.url, '/sessions', JSON.stringify(line));
    assert.ok(!lines.some((l) => l.includes('secret-code-1234') || l.includes('secret-state-5678')), 'the query was logged');
  });
});
