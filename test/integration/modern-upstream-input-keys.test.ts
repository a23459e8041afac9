// A 2026-07-28 client in front of a 2026-07-28 upstream: the keys the upstream gives its input requests
// reach the client as they were given. Renamed by the gateway (`elicitation-1` for the upstream's
// `user_name`), a client that knows a tool's questions could not answer them on its first request, and one
// matching the keys it is asked by (the modern conformance suite does) found none of them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { modernPost } from '../helpers/modern-http.js';
import { startModernRig, type ModernRig } from '../helpers/modern-server.js';

describe("a 2026-07-28 upstream's input request keys, through the gateway", () => {
  let rig: ModernRig;
  before(async () => {
    rig = await startModernRig();
  });
  after(() => rig.close());

  it('a round names each input request by the key the upstream gave it', async () => {
    const a = await modernPost(rig.gw.url(), 'tools/call', { name: 'test_input_required_result_elicitation', arguments: {} });
    assert.equal(a.body.result?.resultType, 'input_required', JSON.stringify(a.body));
    assert.deepEqual(Object.keys(a.body.result.inputRequests), ['user_name']);
    assert.equal(a.body.result.inputRequests.user_name.params._meta, undefined, 'no gateway-internal _meta reaches the client');
    const b = await modernPost(rig.gw.url(), 'tools/call', { name: 'test_input_required_result_elicitation', arguments: {}, inputResponses: { user_name: { action: 'accept', content: { name: 'Ada' } } }, requestState: a.body.result.requestState });
    assert.equal(b.body.result?.content?.[0]?.text, 'Hello, Ada!', JSON.stringify(b.body));
  });

  it('an answer a first request brings under that key is taken: no round', async () => {
    const a = await modernPost(rig.gw.url(), 'tools/call', { name: 'test_input_required_result_elicitation', arguments: {}, inputResponses: { user_name: { action: 'accept', content: { name: 'Alice' } } } });
    assert.equal(a.body.result?.resultType, 'complete', JSON.stringify(a.body));
    assert.equal(a.body.result.content?.[0]?.text, 'Hello, Alice!');
  });
});
