// A 2026-07-28 request whose requestState is no retry of a round (forged, or one a retry already used) is a
// call of its own: refused at the edge for the rate or a scope it is logged as a denial (replayed-state-audit,
// scope-retry-audit). Refused by the modern service itself (400 SWB_REQUEST_STATE_INVALID: what a forging
// or replaying client meets when nothing else refuses it first) it had only an info line and a metric: the
// same request was in the audit trail when the rate refused it and nowhere when its state was refused. Now it
// is logged as a denial with rule `requestState:<reason>`. A real gateway on a real port in front of the
// conformance stdio server.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startAuditedGateway } from '../helpers/audited-gateway.js';
import type { RunningGateway } from '../helpers/gateway.js';
import type { Json } from '../helpers/http-edge.js';
import { inputRound, modernPost } from '../helpers/modern-http.js';

const ASKS = { name: 'test_elicitation', arguments: { message: 'Who are you?' } };
const ADA = { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } };

describe('a requestState the modern service refuses', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let audited: () => Json[];

  before(async () => {
    ({ gw, audited } = await startAuditedGateway());
  });
  after(async () => {
    await gw?.close();
  });

  it('one the gateway never sealed is audited as a denial naming why', async () => {
    const before = audited().length;
    const answer = await modernPost(gw.url(), 'tools/call', { ...ASKS, requestState: 'swb1.forged.state.of.mine', inputResponses: {} });
    assert.equal(answer.status, 400, JSON.stringify(answer.body));
    assert.equal(answer.body.error?.data?.code, 'SWB_REQUEST_STATE_INVALID');
    const lines = audited().slice(before);
    assert.equal(lines.length, 1, lines.map((l) => JSON.stringify(l)).join('\n'));
    assert.equal(lines[0]!.decision, 'deny');
    assert.equal(lines[0]!.outcome, 'denied');
    assert.equal(lines[0]!.rule, 'requestState:malformed');
    assert.equal(lines[0]!.name, 'test_elicitation');
  });

  it('a used one presented again is audited as a denial; the call it answered keeps its one line', async () => {
    const before = audited().length;
    const round = inputRound(await modernPost(gw.url(), 'tools/call', ASKS));
    const retry = { ...ASKS, requestState: round.state, inputResponses: { [round.key]: ADA } };
    const served = await modernPost(gw.url(), 'tools/call', retry);
    assert.equal(served.status, 200, JSON.stringify(served.body));
    const replayed = await modernPost(gw.url(), 'tools/call', retry);
    assert.equal(replayed.status, 400, JSON.stringify(replayed.body));
    assert.equal(replayed.body.error?.data?.reason, 'replayed');
    const lines = audited().slice(before);
    assert.deepEqual(
      lines.map((l) => [l.decision, l.outcome, l.rule ?? null, l.name]),
      [
        ['allow', 'ok', lines[0]!.rule ?? null, 'test_elicitation'],
        ['deny', 'denied', 'requestState:replayed', 'test_elicitation'],
      ],
    );
  });
});
