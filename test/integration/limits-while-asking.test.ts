// A call whose upstream asks the client something (elicitation, sampling, roots) holds no slot of its
// tenant's concurrentRequests while the answer is awaited: a person thinking, or a 2026-07-28 client that
// never retries (the era lets it), does not lock the tenant out. The answer takes the slot back, even at
// the limit: the call goes on, and counts again until it ends. A tenant limited to one request in flight,
// in front of the journaling stdio fixture (one shared process).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { inputRound, Journal, modernPost } from '../helpers/modern-http.js';
import { textOf } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const ASKS_NAME = { name: 'test_input_required_result_elicitation', arguments: {} };
const SIMPLE = { name: 'test_simple_text', arguments: {} };

describe('concurrentRequests while the client is asked something', () => {
  let gw: RunningGateway;
  const journal = new Journal();

  before(async () => {
    gw = await startGateway({
      // After its answer the call goes on for a minute (until the test cancels it): it runs, holding a slot again.
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, args: [...FIXTURE.args, '--journal', journal.file], env: { SWB_FIXTURE_AFTER_INPUT_MS: '60000' }, sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
      // cancelledHoldMs 0: the cancelled call's slot comes back at once (its hold: limits-cancelled-hold.test.ts).
      tenants: [{ name: 'anonymous', endpoints: ['*'], limits: { concurrentRequests: 1, cancelledHoldMs: 0 } }],
    });
  });
  after(() => gw.close());

  const post = (params: Record<string, unknown>, signal?: AbortSignal) => modernPost(gw.url(), 'tools/call', params, { signal });

  it('2026-07-28: a round nobody retries frees the slot; the late retry goes on holding it again', async () => {
    const round = inputRound(await post(ASKS_NAME));
    // The client walked away from that round: the tenant's next call is served all the same.
    const next = await post(SIMPLE);
    assert.equal(next.body.result?.resultType, 'complete', JSON.stringify(next.body));

    // The retry comes after all: its answer reaches the upstream (never refused for the limit)...
    const mark = journal.mark();
    const ac = new AbortController();
    const retry = post({ ...ASKS_NAME, inputResponses: { [round.key]: { action: 'accept', content: { name: 'Alice' } } }, requestState: round.state }, ac.signal);
    await until('the answer reached the upstream', () => journal.since(mark).some((m) => m.result?.action === 'accept'));
    // ...and the call, running again, holds the tenant's one slot.
    const refused = await post(SIMPLE);
    assert.equal(refused.body.error?.data?.code, 'SWB_RATE_LIMITED', JSON.stringify(refused.body));
    ac.abort();
    await assert.rejects(retry, { name: 'AbortError' });
    await until('the cancelled call gave its slot back', async () => (await post(SIMPLE)).body.result?.resultType === 'complete');
  });

  it('2025: a question the user is still thinking about holds no slot', async () => {
    let reached!: () => void;
    const asked = new Promise<void>((resolve) => (reached = resolve));
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const client = new Client({ name: 'limits-while-asking', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, async () => {
      reached();
      await answered;
      return { action: 'accept', content: { username: 'ada', email: 'ada@example.test' } };
    });
    await client.connect(new StreamableHTTPClientTransport(gw.url()));
    try {
      const call = client.callTool({ name: 'test_elicitation', arguments: { message: 'who are you?' } });
      await asked;
      assert.equal(textOf(await client.callTool(SIMPLE)), 'This is a simple text response for testing.');
      answer();
      assert.match(textOf(await call), /action=accept/);
      assert.equal(textOf(await client.callTool(SIMPLE)), 'This is a simple text response for testing.', 'the answered call gave its slot back');
    } finally {
      await client.close();
    }
  });
});
