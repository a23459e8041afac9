// A 2026-07-28 call that asked its client something (an input_required round) is one call, audited once
// when it ends (README, Audit log). The client's retry that answers the round is a request, and pays the
// tenant's requestsPerSecond; refused for it (429), the call goes on waiting for a retry that fits the
// rate. Before, that refused retry was written to the audit as a call denied by limits.requestsPerSecond,
// so the one call had a "deny" line and then its "allow ok" line, and an operator read a denial of a call
// that ran. A real gateway on a real port in front of the conformance stdio server; auth off (tenant
// "anonymous"), a burst of one token and a rate of one every 5 s: the first call takes the token, its
// immediate retry finds none, and a retry sent again once the bucket refilled is served. (At two a second,
// on a loaded machine a round slower than 0.5 s found the bucket refilled, and no retry was refused.)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startAuditedGateway } from '../helpers/audited-gateway.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { inputRound, modernPost } from '../helpers/modern-http.js';
import type { Json } from '../helpers/http-edge.js';

describe('the retry of a 2026-07-28 call refused for the request rate', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let audited: () => Json[];

  before(async () => {
    ({ gw, audited } = await startAuditedGateway({ tenant: { limits: { requestsPerSecond: 0.2, burst: 1 } } }));
  });
  after(async () => {
    await gw?.close();
  });

  it('is no audit line of its own: the call has one, when it ends', async () => {
    const params = { name: 'test_elicitation', arguments: { message: 'Who are you?' } };
    const round = inputRound(await modernPost(gw.url(), 'tools/call', params));
    const retry = { ...params, requestState: round.state, inputResponses: { [round.key]: { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } } } };
    let answer = await modernPost(gw.url(), 'tools/call', retry);
    let refused = 0;
    while (answer.status === 429) {
      refused++;
      await new Promise((r) => setTimeout(r, 250));
      answer = await modernPost(gw.url(), 'tools/call', retry);
    }
    assert.ok(refused > 0, 'the first retry found the bucket empty');
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.match(JSON.stringify(answer.body.result), /action=accept/);
    const lines = audited();
    assert.equal(lines.length, 1, lines.map((l) => JSON.stringify(l)).join('\n'));
    assert.equal(lines[0]!.name, 'test_elicitation');
    assert.equal(lines[0]!.decision, 'allow');
    assert.equal(lines[0]!.outcome, 'ok');
  });

  it('a new call the rate refuses is still audited as a denial', async () => {
    const before = audited().length;
    let answer = await modernPost(gw.url(), 'tools/call', { name: 'test_simple_text', arguments: {} });
    // The bucket may hold its one token again: the first call takes it, the one right after it finds none.
    if (answer.status !== 429) answer = await modernPost(gw.url(), 'tools/call', { name: 'test_simple_text', arguments: {} });
    assert.equal(answer.status, 429);
    const denied = audited().slice(before).filter((l) => l.rule === 'limits.requestsPerSecond');
    assert.equal(denied.length, 1);
    assert.equal(denied[0]!.name, 'test_simple_text');
  });

  // Any string in requestState once made a refused call "a retry": a client adding a forged one to every
  // request had its rate denials written nowhere. Only a state the gateway sealed for this call counts.
  it('a call with a requestState the gateway never issued, refused for the rate, is audited as a denial', async () => {
    const forged = { name: 'test_simple_text', arguments: {}, requestState: 'swb1.forged.state.of.mine', inputResponses: {} };
    const before = audited().length;
    let answer = await modernPost(gw.url(), 'tools/call', forged);
    if (answer.status !== 429) answer = await modernPost(gw.url(), 'tools/call', forged);
    assert.equal(answer.status, 429);
    const denied = audited().slice(before).filter((l) => l.rule === 'limits.requestsPerSecond');
    assert.equal(denied.length, 1, audited().slice(before).map((l) => JSON.stringify(l)).join('\n'));
    assert.equal(denied[0]!.name, 'test_simple_text');
  });
});
