// A 2025-03-26 batch refused at the edge with HTTP 403 insufficient_scope is refused whole: none of its
// requests is handled. Each audited request of it gets its denial line, as each of a batch the request rate
// refuses does (README, Audit log): before, only the first request lacking a scope had one, so a second call
// to a scoped tool in the same batch, and the other calls refused with it, left no trace. A real gateway on a
// real port in front of the conformance stdio server; JWT auth, test_elicitation allowed only with scope "ask".
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningGateway } from '../helpers/gateway.js';
import { initializeBody, post, type Json } from '../helpers/http-edge.js';
import { startScopedAuditGateway, type ScopedAuditGateway } from '../helpers/scoped-audit-gateway.js';

describe('a batch refused for a missing scope', { timeout: 60_000 }, () => {
  let rig: ScopedAuditGateway;
  let gw: RunningGateway;
  let narrow: string;
  const audited = (): Json[] => rig.audited();

  before(async () => {
    rig = await startScopedAuditGateway();
    gw = rig.gw;
    narrow = await rig.token('tools:read', 'ada');
  });
  after(() => rig?.close());

  it('has a denial line for each of its audited requests, none of which ran', async () => {
    const auth = { authorization: `Bearer ${narrow}` };
    const init = await post(gw, initializeBody('2025-03-26', 1), { headers: auth });
    assert.equal(init.status, 200, await init.text());
    const sid = init.headers.get('mcp-session-id')!;
    assert.equal((await post(gw, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sid, headers: auth })).status, 202);
    const call = (id: number, name: string, args: Json) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
    const batch = [call(2, 'test_simple_text', {}), call(3, 'test_elicitation', { message: 'a' }), { jsonrpc: '2.0', id: 4, method: 'tools/list' }, call(5, 'test_elicitation', { message: 'b' })];
    const refused = await post(gw, batch, { sid, headers: auth });
    assert.equal(refused.status, 403, await refused.clone().text());
    const lines = audited().map((l) => [l.subject, l.tenant, l.name, l.decision, l.outcome, String(l.rule).startsWith('missing scope') ? 'missing scope' : l.rule]);
    assert.deepEqual(
      lines,
      [
        ['ada', 'acme', 'test_simple_text', 'deny', 'denied', 'missing scope'],
        ['ada', 'acme', 'test_elicitation', 'deny', 'denied', 'missing scope'],
        ['ada', 'acme', 'test_elicitation', 'deny', 'denied', 'missing scope'],
      ],
      JSON.stringify(audited()),
    );
  });
});
