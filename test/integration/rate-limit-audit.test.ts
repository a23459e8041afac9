// A tools/call refused for the tenant's request rate (429, at the edge, before its session is looked up)
// is audited as a denial, as one refused for the concurrent-request limit is: tenant, subject, endpoint,
// method, name, decision "deny", rule "limits.requestsPerSecond", outcome "denied". Before, it wrote no
// audit line at all, so a flood of refused calls left no trace of who tried what. A request the audit
// does not cover (tools/list) writes none, refused or not. Auth off: tenant and subject "anonymous".
// The bucket refills at one token per 100 s: nothing refills while the test runs.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startAuditedGateway } from '../helpers/audited-gateway.js';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { initializeBody, post, type Json } from '../helpers/http-edge.js';

describe('a tools/call refused for the request rate is audited', { timeout: 30_000 }, () => {
  let gw: RunningGateway;
  let logLines: string[];
  let audited: () => Json[];

  before(async () => {
    ({ gw, logLines, audited } = await startAuditedGateway({ tenant: { limits: { requestsPerSecond: 0.01, burst: 2 } } }));
  });
  after(async () => {
    await gw?.close();
  });

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

  // The audit names a call by its canonical name, and a call_tool by the call it wraps (README, Audit log):
  // refused at the edge, before the tools stage, the line named what the client sent instead.
  it('a renamed tool and a call_tool are audited under the canonical name of the tool called', async () => {
    const lines: string[] = [];
    const search = await startGateway(
      {
        upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared' }],
        endpoints: [{ path: '/mcp', upstreams: ['fx'], tools: { exposure: 'search', overrides: { test_simple_text: { name: 'simple' } } } }],
        tenants: [{ name: 'anonymous', endpoints: ['*'], limits: { requestsPerSecond: 0.01, burst: 1 } }],
      },
      { logLines: lines },
    );
    try {
      const init = await post(search, initializeBody('2025-06-18', 1));
      assert.equal(init.status, 200, await init.text());
      const sid = init.headers.get('mcp-session-id')!;
      const calls = [
        { name: 'simple', arguments: {} },
        { name: 'call_tool', arguments: { name: 'simple', arguments: {} } },
      ];
      for (const [i, params] of calls.entries()) assert.equal((await post(search, { jsonrpc: '2.0', id: 10 + i, method: 'tools/call', params }, { sid })).status, 429);
      const names = lines.map((l) => JSON.parse(l) as Json).filter((l) => l.audit === true && l.msg === 'audit').map((l) => [l.name, l.rule]);
      assert.deepEqual(names, [
        ['test_simple_text', 'limits.requestsPerSecond'],
        ['test_simple_text', 'limits.requestsPerSecond'],
      ]);
    } finally {
      await search.close();
    }
  });
});
