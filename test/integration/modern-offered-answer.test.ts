// A 2026-07-28 client may bring answers on its first request (inputResponses under the key the gateway will
// give the question). An answer a retry brings for a question already asked is held to that question's schema
// (an ElicitResult with no valid action, content that is no object → -32602 naming the key, the call cancelled),
// but one brought before its question was asked went to the 2025 upstream as it was: `{action: "bogus"}` was the
// elicitation's result, and the tool went on with it. Both are now judged alike.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { Journal, modernPost } from '../helpers/modern-http.js';
import { until } from '../helpers/wait.js';

const ASKS = { name: 'test_elicitation', arguments: { message: 'Who are you?' } };
const CAPS = { elicitation: { form: {} } };

describe('2026-07-28: an invalid answer brought before its question, through a 2025 upstream', () => {
  let gw: RunningGateway;
  const journal = new Journal();
  before(async () => {
    gw = await startGateway(journal.gatewayConfig());
  });
  after(() => gw.close());

  for (const bad of [{ action: 'bogus' }, { action: 'accept', content: 'Alice' }]) {
    it(`refuses ${JSON.stringify(bad)} with -32602 naming the key, and never gives it to the upstream`, async () => {
      const mark = journal.mark();
      const r = await modernPost(gw.url(), 'tools/call', { ...ASKS, inputResponses: { 'elicitation-1': bad } }, { caps: CAPS });
      assert.equal(r.body.error?.code, -32602, JSON.stringify(r.body));
      assert.match(r.body.error.message, /inputResponses\["elicitation-1"\]/);
      assert.equal(r.body.error.data?.key, 'elicitation-1');
      await until('the call cancelled upstream', () => journal.since(mark).some((m) => m.method === 'notifications/cancelled'));
      const answered = journal.since(mark).filter((m) => m.method === undefined && m.result !== undefined && 'action' in m.result);
      assert.deepEqual(answered, [], 'the invalid answer is not the elicitation result');
    });
  }

  it('a valid answer brought along completes the call on its first request', async () => {
    const r = await modernPost(gw.url(), 'tools/call', { ...ASKS, inputResponses: { 'elicitation-1': { action: 'accept', content: { username: 'alice', email: 'a@example.com' } } } }, { caps: CAPS });
    assert.equal(r.body.result?.resultType, 'complete', JSON.stringify(r.body));
    assert.match(r.body.result.content[0].text, /action=accept/);
  });
});
