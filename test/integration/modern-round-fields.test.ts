// A 2026-07-28 retry carries `requestState` (a string: the server's, echoed byte-exact) and `inputResponses`
// (an object of answers by key). One whose requestState was no string (a number, an object, null: a client
// that mangled it) was served as a new request, the era's fields dropped: the tool ran again upstream,
// whatever its first run had done, and the client got a result as if its retry had continued the call. Such a
// request is now refused 400 -32602 naming the field, as a tampered state is, and nothing reaches the upstream;
// so is one whose inputResponses is no object (it was read as no answers at all).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { Journal, modernPost } from '../helpers/modern-http.js';

const CALL = { name: 'test_simple_text', arguments: {} };

describe('2026-07-28: requestState and inputResponses of the wrong type', () => {
  let gw: RunningGateway;
  const journal = new Journal();
  before(async () => {
    gw = await startGateway(journal.gatewayConfig());
  });
  after(() => gw.close());

  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['a numeric requestState', { requestState: 5 }, /requestState/],
    ['an object requestState', { requestState: { state: 'x' } }, /requestState/],
    ['a null requestState', { requestState: null }, /requestState/],
    ['a string inputResponses', { inputResponses: 'yes' }, /inputResponses/],
    ['an array inputResponses', { inputResponses: [{ action: 'accept' }] }, /inputResponses/],
  ];
  for (const [what, extra, field] of cases) {
    it(`refuses ${what} with 400 -32602, and runs nothing upstream`, async () => {
      const mark = journal.mark();
      const r = await modernPost(gw.url(), 'tools/call', { ...CALL, ...extra });
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.error?.code, -32602, JSON.stringify(r.body));
      assert.match(r.body.error.message, field);
      assert.deepEqual(journal.since(mark).filter((m) => m.method === 'tools/call'), [], 'the tool is not run again');
    });
  }

  it('a well-formed first call (no requestState, answers offered as an object) is served', async () => {
    const r = await modernPost(gw.url(), 'tools/call', { ...CALL, inputResponses: {} });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.result?.resultType, 'complete');
  });
});
