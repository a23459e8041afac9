// A 2026-07-28 tools/call whose standing could not open its upstreams (here a per-session upstream whose
// one instance a 2025 session holds, queue 0: SWB_POOL_EXHAUSTED) failed before the request pipeline:
// counted in switchboard_requests_total as an error and logged, but the audit log, which has a line for
// every tools/call, prompts/get and resources/read (README, Audit log: outcome "error" included), had none.
// A 2025 session meets the same failure at its initialize, before any call; a 2026-07-28 client has no
// initialize, and its call is what failed. A real gateway on a real port, the conformance stdio server.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startAuditedGateway } from '../helpers/audited-gateway.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { initializeBody, post, type Json } from '../helpers/http-edge.js';
import { modernPost } from '../helpers/modern-http.js';

describe('a 2026-07-28 call whose upstreams could not be opened', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let logLines: string[];
  let audited: () => Json[];

  before(async () => {
    ({ gw, logLines, audited } = await startAuditedGateway({
      upstream: { sharing: 'per-session', pool: { max: 1, queue: 0 } },
      tenant: { tools: { allow: ['*'], deny: ['test_error_handling'] } },
    }));
    const init = await post(gw, initializeBody('2025-06-18'));
    assert.equal(init.status, 200, await init.text());
  });
  after(async () => {
    await gw?.close();
  });

  it('is audited with outcome "error", by the rule that allowed it', async () => {
    const answer = await modernPost(gw.url(), 'tools/call', { name: 'test_simple_text', arguments: {} });
    assert.equal(answer.body.error?.data?.code, 'SWB_POOL_EXHAUSTED', JSON.stringify(answer.body));
    const lines = audited();
    assert.equal(lines.length, 1, logLines.join('\n'));
    assert.equal(lines[0]!.method, 'tools/call');
    assert.equal(lines[0]!.name, 'test_simple_text');
    assert.equal(lines[0]!.decision, 'allow');
    assert.equal(lines[0]!.rule, 'tools.allow:*');
    assert.equal(lines[0]!.outcome, 'error');
    assert.equal(lines[0]!.tenant, 'anonymous');
  });

  it('a call its tenant is denied is audited as the denial it is, and answered as any call then is', async () => {
    const before = audited().length;
    const answer = await modernPost(gw.url(), 'tools/call', { name: 'test_error_handling', arguments: {} });
    const lines = audited().slice(before);
    assert.equal(lines.length, 1, logLines.join('\n'));
    assert.equal(lines[0]!.decision, 'deny');
    assert.equal(lines[0]!.rule, 'tools.deny:test_error_handling');
    assert.equal(lines[0]!.outcome, 'denied');
    // Nothing tells a denied tool from an allowed one: both get the failure the standing met.
    const allowed = await modernPost(gw.url(), 'tools/call', { name: 'test_simple_text', arguments: {} });
    assert.deepEqual(answer.body.error, allowed.body.error);
    assert.equal(answer.body.error?.data?.code, 'SWB_POOL_EXHAUSTED', JSON.stringify(answer.body));
  });
});
