// A 2026-07-28 retry whose inputResponses answer breaks the schema of the question it answers (an
// ElicitResult with no valid action, content that is no object) is the client's invalid input: the spec
// (MRTR, error handling) asks for a JSON-RPC error, and a 2026-07-28 upstream's round already gives -32602.
// Through a 2025 upstream the answer became a -32603 error sent to the upstream for its elicitation, and the
// client got whatever the upstream made of that: here a tool result with isError, a failure of the tool
// for the model to read rather than a refusal of the request. It is now refused -32602 naming the key,
// and the held upstream call is cancelled (the answer never reaches the upstream).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { inputRound, Journal, modernPost } from '../helpers/modern-http.js';
import { until } from '../helpers/wait.js';

const ASKS_NAME = { name: 'test_input_required_result_elicitation', arguments: {} };

describe('2026-07-28: an invalid answer in a retry, through a 2025 upstream', () => {
  let gw: RunningGateway;
  const journal = new Journal();
  before(async () => {
    gw = await startGateway(journal.gatewayConfig());
  });
  after(() => gw.close());

  // The last three break the question's requestedSchema ({name: string}, required): before 2026-12-08 they were
  // relayed, and the tool greeted "5", "a" or a stranger.
  const offSchema = [{ name: 5 }, { name: ['a'] }, { other: 'x' }].map((content) => ({ action: 'accept', content }));
  for (const bad of [{ action: 'bogus' }, { action: 'accept', content: 'Alice' }, ...offSchema]) {
    it(`refuses ${JSON.stringify(bad)} with -32602 and cancels the held call`, async () => {
      const round = inputRound(await modernPost(gw.url(), 'tools/call', ASKS_NAME));
      const mark = journal.mark();
      const r = await modernPost(gw.url(), 'tools/call', { ...ASKS_NAME, inputResponses: { [round.key]: bad }, requestState: round.state });
      assert.equal(r.body.error?.code, -32602, JSON.stringify(r.body));
      assert.match(r.body.error.message, new RegExp(`inputResponses\\["${round.key}"\\]`));
      assert.equal(r.body.error.data?.key, round.key);
      await until('the held call cancelled upstream', () => journal.since(mark).some((m) => m.method === 'notifications/cancelled'));
      // Its question is refused as any question of an ended call is, not answered with the client's invalid answer's error.
      const refusals = journal.since(mark).filter((m) => m.method === undefined && m.error !== undefined);
      assert.ok(refusals.every((m) => String(m.error.message).startsWith('the client request ended')), JSON.stringify(refusals));
      // The call is over: its state continues nothing any more.
      const again = await modernPost(gw.url(), 'tools/call', { ...ASKS_NAME, inputResponses: { [round.key]: { action: 'accept', content: { name: 'Alice' } } }, requestState: round.state });
      assert.equal(again.status, 400, JSON.stringify(again.body));
    });
  }

  it('a valid answer still completes the call', async () => {
    const round = inputRound(await modernPost(gw.url(), 'tools/call', ASKS_NAME));
    const r = await modernPost(gw.url(), 'tools/call', { ...ASKS_NAME, inputResponses: { [round.key]: { action: 'accept', content: { name: 'Alice' } } }, requestState: round.state });
    assert.equal(r.body.result?.resultType, 'complete', JSON.stringify(r.body));
  });
});
