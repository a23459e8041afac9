// A 2026-07-28 call that asked its client something (an input_required round) is one call, audited once
// when it ends (README, Audit log). Its retry is judged by the retry's own token: one whose token lacks a
// scope the call needs is refused 403 insufficient_scope (step-up), and the call goes on waiting for a
// retry with a token that has it (found by a review). Before, that refused retry was written to the audit
// as a denial of the call, which then ran and had its "allow ok" line too: a denial of a call that ran, as
// the rate's refusal was before a4633aa. A real gateway on a real port in front of the conformance stdio
// server; JWT auth, the elicitation tool allowed only with scope "ask".
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningGateway } from '../helpers/gateway.js';
import { inputRound, modernPost } from '../helpers/modern-http.js';
import type { Json } from '../helpers/http-edge.js';
import { startScopedAuditGateway, type ScopedAuditGateway } from '../helpers/scoped-audit-gateway.js';

describe('the retry of a 2026-07-28 call refused for a missing scope', { timeout: 60_000 }, () => {
  let rig: ScopedAuditGateway;
  let gw: RunningGateway;
  let wide: string;
  let narrow: string;
  const audited = (): Json[] => rig.audited();

  before(async () => {
    rig = await startScopedAuditGateway();
    gw = rig.gw;
    wide = await rig.token('tools:read ask');
    narrow = await rig.token('tools:read');
  });
  after(() => rig?.close());

  it('is no audit line of its own: the call has one, when it ends', async () => {
    const params = { name: 'test_elicitation', arguments: { message: 'Who are you?' } };
    const round = inputRound(await modernPost(gw.url(), 'tools/call', params, { token: wide }));
    const retry = { ...params, requestState: round.state, inputResponses: { [round.key]: { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } } } };
    const refused = await modernPost(gw.url(), 'tools/call', retry, { token: narrow });
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    const answer = await modernPost(gw.url(), 'tools/call', retry, { token: wide });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.match(JSON.stringify(answer.body.result), /action=accept/);
    const lines = audited();
    assert.equal(lines.length, 1, lines.map((l) => JSON.stringify(l)).join('\n'));
    assert.equal(lines[0]!.decision, 'allow');
    assert.equal(lines[0]!.outcome, 'ok');
  });

  it('a new call refused for the scope is still audited as a denial', async () => {
    const before = audited().length;
    const answer = await modernPost(gw.url(), 'tools/call', { name: 'test_elicitation', arguments: { message: 'Who are you?' } }, { token: narrow });
    assert.equal(answer.status, 403);
    const denied = audited().slice(before);
    assert.equal(denied.length, 1, denied.map((l) => JSON.stringify(l)).join('\n'));
    assert.equal(denied[0]!.decision, 'deny');
  });

  // Any string in requestState once made a refused call "a retry": a client adding a forged one to every
  // request had its scope denials written nowhere. Only a state the gateway sealed for this call counts.
  it('a call with a requestState the gateway never issued, refused for the scope, is audited as a denial', async () => {
    const before = audited().length;
    const forged = { name: 'test_elicitation', arguments: { message: 'Who are you?' }, requestState: 'swb1.forged.state.of.mine', inputResponses: {} };
    const answer = await modernPost(gw.url(), 'tools/call', forged, { token: narrow });
    assert.equal(answer.status, 403);
    const denied = audited().slice(before);
    assert.equal(denied.length, 1, denied.map((l) => JSON.stringify(l)).join('\n'));
    assert.equal(denied[0]!.decision, 'deny');
    assert.equal(denied[0]!.name, 'test_elicitation');
  });
});
