// What a 2026-07-28 upstream is told of the client behind a request (its _meta clientCapabilities): what
// the gateway relays that the client declared. A client's sampling.tools was dropped (the gateway's own
// `sampling: {}` went instead; found by a review), so an upstream that keeps the spec's rule (no tools in
// a sampling request to a client that did not declare them) never asked for tool-enabled sampling.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { META_CAPABILITIES } from '../../../src/jsonrpc/modern-meta.js';
import { callWithRounds, relayedCapabilities } from '../../../src/upstream/modern-rounds.js';
import { recordingCaller } from '../../helpers/crossing-upstream.js';

const SHARED = { sampling: {}, elicitation: { form: {}, url: {} } };

describe("the client's capabilities told to a 2026-07-28 upstream", () => {
  it("a client's sampling.tools is passed on; a client without it is told none", () => {
    assert.deepEqual(relayedCapabilities(SHARED, { sampling: { tools: {} }, roots: {} }), { sampling: { tools: {} } });
    assert.deepEqual(relayedCapabilities(SHARED, { sampling: {} }), { sampling: {} });
    assert.deepEqual(relayedCapabilities(SHARED, { sampling: { tools: null } }), { sampling: {} });
    assert.deepEqual(relayedCapabilities(SHARED, { elicitation: {} }), { elicitation: { form: {} } });
  });

  it('reaches the upstream in the request\'s _meta', async () => {
    const A = recordingCaller('A');
    const caller = { ...A.caller, capabilitiesFor: () => ({ sampling: { tools: {} } }) };
    const sent: Array<Record<string, unknown>> = [];
    await callWithRounds(async (p) => (sent.push(p), { content: [] }), { name: 'x' }, SHARED, { caller, callerRequestId: 1, signal: undefined, upstream: 'u' });
    assert.deepEqual((sent[0]!._meta as Record<string, unknown>)[META_CAPABILITIES], { sampling: { tools: {} } });
  });
});
