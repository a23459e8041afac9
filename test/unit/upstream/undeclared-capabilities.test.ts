// The gateway declares capabilities to each upstream connection, and relays only what they cover: a
// shared connection is not offered roots (they are one client's workspace, and no single client stands
// behind a shared process). A roots/list it sends anyway used to be relayed to whichever session the
// routing guess picked, and the answer went back: a shared server could collect its users' workspace
// paths. It is now refused (-32601, as a client refuses a request it did not declare) in both eras: a
// 2025 upstream's request, and a 2026-07-28 upstream's input request (the call then fails).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JsonRpcError } from '../../../src/jsonrpc/json-rpc-error.js';
import { callWithRounds } from '../../../src/upstream/modern-rounds.js';
import { crossingConfig, crossingPool, heard, recordingCaller } from '../../helpers/crossing-upstream.js';
import { until } from '../../helpers/wait.js';

/** What the gateway declares to a shared connection (upstream-client.ts): everything but roots. */
const SHARED = { sampling: {}, elicitation: { form: {}, url: {} } };

describe('a request of the upstream needing a capability the gateway did not declare to it', () => {
  it("2025 (stdio, shared): roots/list is refused with -32601, and the one busy session is never asked", async () => {
    const pool = crossingPool(crossingConfig('shared'));
    await pool.start();
    const A = recordingCaller('A');
    const C = recordingCaller('C');
    try {
      const call = pool.instanceFor(A.caller).request('tools/call', { name: 'peek_roots', arguments: {} }, { caller: A.caller, callerRequestId: 1 });
      call.catch(() => {});
      await until('the upstream got an answer to its roots/list', async () => (await heard(pool, C.caller)).some((m) => m.answer === 'roots-1'));
      const answer = (await heard(pool, C.caller)).find((m) => m.answer === 'roots-1')!;
      assert.deepEqual(A.asked, [], 'A was never asked for its roots');
      assert.equal(answer.result, undefined, JSON.stringify(answer));
      assert.equal(answer.code, -32601);
      assert.match(String(answer.error), /roots/);
    } finally {
      await pool.close();
    }
  });

  it('2026-07-28: an input request for roots fails the call, and its client is never asked', async () => {
    const A = recordingCaller('A');
    let sent = 0;
    const send = async () => (sent++, { resultType: 'input_required', inputRequests: { where: { method: 'roots/list' } }, requestState: 's1' });
    const call = callWithRounds(send, { name: 'peek' }, SHARED, { caller: A.caller, callerRequestId: 1, signal: undefined, upstream: 'u' });
    await assert.rejects(call, (err: unknown) => err instanceof JsonRpcError && err.code === -32601 && /roots/.test(err.message));
    assert.deepEqual(A.asked, []);
    assert.equal(sent, 1, 'the call is not sent again with an answer');
  });

  it('2026-07-28: what the gateway declared is still relayed (sampling)', async () => {
    const A = recordingCaller('A');
    const rounds: Array<Record<string, unknown>> = [];
    const send = async (params: Record<string, unknown>) => {
      rounds.push(params);
      return rounds.length === 1 ? { resultType: 'input_required', inputRequests: { s: { method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } } } } : { content: [] };
    };
    await callWithRounds(send, { name: 'summarize' }, SHARED, { caller: A.caller, callerRequestId: 1, signal: undefined, upstream: 'u' });
    assert.deepEqual(A.asked.map((a) => a.method), ['sampling/createMessage']);
    assert.ok((rounds[1]!.inputResponses as Record<string, unknown>).s);
  });
});
