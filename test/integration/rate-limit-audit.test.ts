// A tools/call refused for the tenant's request rate (429, at the edge, before its session is looked up)
// is audited as a denial, as one refused for the concurrent-request limit is: tenant, subject, endpoint,
// method, name, decision "deny", rule "limits.requestsPerSecond", outcome "denied". Before, it wrote no
// audit line at all, so a flood of refused calls left no trace of who tried what. A request the audit
// does not cover (tools/list) writes none, refused or not. Auth off: tenant and subject "anonymous".
// The bucket refills at one token per 100 s: nothing refills while the test runs.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { initializeBody, post, type Json } from '../helpers/http-edge.js';

describe('a tools/call refused for the request rate is audited', { timeout: 30_000 }, () => {
  let gw: RunningGateway;
  const logLines: string[] = [];

  before(async () => {
    gw = await startGateway(
      {
        audit: { enabled: true },
        upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared' }],
        endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
        tenants: [{ name: 'anonymous', endpoints: ['*'], limits: { requestsPerSecond: 0.01, burst: 2 } }],
      },
      { logLines },
    );
  });
  after(async () => {
    await gw?.close();
  });

  const audited = (): Json[] => logLines.map((l) => JSON.parse(l) as Json).filter((l) => l.audit === true && l.msg === 'audit');

  it('one deny line with the tenant, subject, tool and rule; a refused tools/list writes none', async () => {
    const init = await post(gw, initializeBody('2025-06-18', 1));
    assert.equal(init.status, 200, await init.text());
    const sid = init.headers.get('mcp-session-id')!;
    assert.equal((await post(gw, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sid })).status, 202);
    // Two requests (initialize, this call) take the burst of two.
    const ok = await post(gw, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'test_simple_text', arguments: {} } }, { sid });
    assert.equal(ok.status, 200, await ok.text());
    assert.equal(audited().length, 1, logLines.join('\n'));

    const refused = await post(gw, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'test_simple_text', arguments: {} } }, { sid });
    assert.equal(refused.status, 429, await refused.clone().text());
    const listed = await post(gw, { jsonrpc: '2.0', id: 4, method: 'tools/list' }, { sid });
    assert.equal(listed.status, 429);

    const lines = audited();
    assert.equal(lines.length, 2, lines.map((l) => JSON.stringify(l)).join('\n'));
    const line = lines[1]!;
    assert.equal(line.tenant, 'anonymous');
    assert.equal(line.subject, 'anonymous');
    assert.equal(line.endpoint, '/mcp');
    assert.equal(line.method, 'tools/call');
    assert.equal(line.name, 'test_simple_text');
    assert.equal(line.decision, 'deny');
    assert.equal(line.rule, 'limits.requestsPerSecond');
    assert.equal(line.outcome, 'denied');
  });
});
