// The official SDK v2 client (@modelcontextprotocol/client) against the gateway fronting the 2025 stdio
// conformance fixture, in each of its version-negotiation modes: pinned to 2026-07-28 (stateless, the
// fixture's elicitation and sampling requests arrive as input_required rounds answered by the client's
// handlers), auto (probes server/discover and must stay modern), and legacy (a 2025 session on the same
// endpoint). SDK 1.x keeps working beside them. Both sharing modes of the upstream.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient, textOf } from '../helpers/sdk.js';
import { inputRound, modernPost } from '../helpers/modern-http.js';
import { until } from '../helpers/wait.js';

type Options = NonNullable<ConstructorParameters<typeof Client>[1]>;

const PIN: Options = { versionNegotiation: { mode: { pin: '2026-07-28' } } };
const AUTO: Options = { versionNegotiation: { mode: 'auto' } };
const CAPS = { elicitation: { form: {} }, sampling: {} };

for (const sharing of ['shared', 'per-session'] as const) {
  describe(`SDK v2 client through the gateway, 2025 stdio upstream (${sharing})`, () => {
    let gw: RunningGateway;
    const clients: Array<{ close(): Promise<void> }> = [];

    /** An SDK v2 client with elicitation and sampling answered by the test, recording what it was asked. */
    const connect = async (options: Options) => {
      const client = new Client({ name: 'modern-sdk-test', version: '1.0.0' }, { capabilities: CAPS, ...options });
      const asked: string[] = [];
      client.setRequestHandler('elicitation/create', async (req) => {
        asked.push(`elicitation: ${req.params.message}`);
        return { action: 'accept', content: { name: 'Alice', username: 'alice', email: 'alice@example.com' } };
      });
      client.setRequestHandler('sampling/createMessage', async (req) => {
        const first = req.params.messages[0]?.content;
        asked.push(`sampling: ${first && 'text' in first ? first.text : '?'}`);
        return { role: 'assistant', model: 'test-model', stopReason: 'endTurn', content: { type: 'text', text: 'Paris' } };
      });
      clients.push(client);
      await client.connect(new StreamableHTTPClientTransport(gw.url()));
      return { client, asked };
    };

    before(async () => {
      gw = await startGateway({
        upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing, pool: { size: 1 } }],
        endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
      });
    });
    after(async () => {
      await Promise.all(clients.map((c) => c.close().catch(() => {})));
      await gw.close();
    });

    it('pinned to 2026-07-28: discovers, lists and calls tools statelessly', async () => {
      const { client } = await connect(PIN);
      assert.equal(client.getProtocolEra(), 'modern');
      assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
      assert.ok(client.getDiscoverResult()?.supportedVersions.includes('2026-07-28'));
      const { tools } = await client.listTools();
      for (const name of ['test_simple_text', 'test_input_required_result_elicitation', 'test_sampling', 'test_trigger_tool_change']) {
        assert.ok(tools.some((t) => t.name === name), `${name} is listed`);
      }
      const result = await client.callTool({ name: 'test_simple_text', arguments: {} });
      assert.equal(textOf(result), 'This is a simple text response for testing.');
    });

    it('pinned: an upstream elicitation is an input_required round the elicitation handler answers', async () => {
      const { client, asked } = await connect(PIN);
      const hello = await client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} });
      assert.equal(textOf(hello), 'Hello, Alice!');
      const plain = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
      assert.match(textOf(plain), /action=accept.*alice@example\.com/);
      assert.deepEqual(asked, ['elicitation: Upstream "fx" asks: What is your name?', 'elicitation: Upstream "fx" asks: Who are you?']);
    });

    it('pinned: an upstream sampling request is an input_required round the sampling handler answers', async () => {
      const { client, asked } = await connect(PIN);
      const capital = await client.callTool({ name: 'test_input_required_result_sampling', arguments: {} });
      assert.equal(textOf(capital), 'Sampling result: Paris');
      const llm = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'Capital of France?' } });
      assert.equal(textOf(llm), 'LLM response: Paris');
      assert.deepEqual(asked, ['sampling: What is the capital of France?', 'sampling: Capital of France?']);
    });

    it('pinned: tools list_changed arrives on client.listen() after test_trigger_tool_change', async () => {
      const { client } = await connect(PIN);
      let changes = 0;
      client.setNotificationHandler('notifications/tools/list_changed', async () => void changes++);
      const subscription = await client.listen({ toolsListChanged: true });
      assert.equal(subscription.honoredFilter.toolsListChanged, true);
      await client.callTool({ name: 'test_trigger_tool_change', arguments: {} });
      await until('notifications/tools/list_changed on the listen stream', () => changes >= 1);
      await subscription.close();
      assert.equal(await subscription.closed, 'local');
    });

    it("auto mode: probes server/discover and ends up modern, rounds included", async () => {
      const { client, asked } = await connect(AUTO);
      assert.equal(client.getProtocolEra(), 'modern');
      assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
      assert.equal(textOf(await client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} })), 'Hello, Alice!');
      assert.deepEqual(asked, ['elicitation: Upstream "fx" asks: What is your name?']);
    });

    it('legacy mode (the SDK v2 default): a 2025 session whose elicitation and sampling are real server→client requests', async () => {
      const { client, asked } = await connect({});
      assert.equal(client.getProtocolEra(), 'legacy');
      assert.notEqual(client.getNegotiatedProtocolVersion(), '2026-07-28');
      assert.ok((await client.listTools()).tools.some((t) => t.name === 'test_simple_text'));
      assert.match(textOf(await client.callTool({ name: 'test_elicitation', arguments: { message: 'Legacy?' } })), /action=accept/);
      assert.equal(textOf(await client.callTool({ name: 'test_sampling', arguments: { prompt: 'Hi' } })), 'LLM response: Paris');
      assert.deepEqual(asked, ['elicitation: Upstream "fx" asks: Legacy?', 'sampling: Hi']);
    });

    it('SDK 1.x on the same endpoint: a 2025 session as before', async () => {
      const client = await connectClient(gw, 'streamable-http');
      clients.push(client);
      assert.equal(textOf(await client.callTool({ name: 'test_simple_text', arguments: {} })), 'This is a simple text response for testing.');
      assert.match(textOf(await client.callTool({ name: 'test_elicitation', arguments: { message: 'One?' } })), /action=accept.*Ada/);
      assert.match(textOf(await client.callTool({ name: 'test_sampling', arguments: { prompt: 'Hi' } })), /^LLM response: sampled: /);
    });
  });
}

describe('SDK v2 client (pinned to 2026-07-28), a 2025 upstream that asks its client something no input request can be', () => {
  let gw: RunningGateway;
  let client: Client | undefined;
  before(async () => {
    gw = await startGateway({
      upstreams: [{ name: 'unruly', transport: 'stdio', command: process.execPath, args: ['test/fixtures/unruly-server.mjs', '--stray-tool'], sandbox: 'none', sharing: 'per-session', pool: { size: 1, warm: 0, max: 4 } }],
      endpoints: [{ path: '/mcp', upstreams: ['unruly'] }],
    });
  });
  after(async () => {
    await client?.close();
    await gw.close();
  });

  it('the upstream is refused (-32601) as a client would refuse it, and the call completes; no input round names it', async () => {
    client = new Client({ name: 'modern-sdk-test', version: '1.0.0' }, { capabilities: CAPS, ...PIN });
    await client.connect(new StreamableHTTPClientTransport(gw.url()));
    // tasks/list is a 2025-11-25 client-side request; an InputRequiredResult may only carry elicitation,
    // sampling and roots (the SDK refuses the whole result otherwise).
    assert.equal(textOf(await client.callTool({ name: 'stray-request', arguments: {} })), 'stray refused -32601');
    assert.equal(textOf(await client.callTool({ name: 'stray-request', arguments: { method: 'tools/call' } })), 'stray refused -32601');
  });

  it('an input_required round says who served it (_meta serverInfo, as every result should) and nothing of caching', async () => {
    const sampling = { messages: [{ role: 'user', content: { type: 'text', text: 'Capital?' } }], maxTokens: 10 };
    const r = await modernPost(gw.url(), 'tools/call', { name: 'stray-request', arguments: { method: 'sampling/createMessage', params: sampling } }, { caps: { sampling: {} } });
    assert.equal(r.body.result?.resultType, 'input_required', JSON.stringify(r.body));
    assert.equal(r.body.result._meta?.['io.modelcontextprotocol/serverInfo']?.name, 'switchboard', JSON.stringify(r.body.result));
    assert.equal('ttlMs' in r.body.result || 'cacheScope' in r.body.result, false);
    // Answered, so that no call of this standing stays held for the next test.
    const { key, state } = inputRound(r);
    const answer = { role: 'assistant', model: 'm', content: { type: 'text', text: 'Paris' } };
    const done = await modernPost(gw.url(), 'tools/call', { name: 'stray-request', arguments: { method: 'sampling/createMessage', params: sampling }, inputResponses: { [key]: answer }, requestState: state }, { caps: { sampling: {} } });
    assert.equal(done.body.result?.resultType, 'complete', JSON.stringify(done.body));
  });

  it('a sampling request that offers tools reaches only a client that declared sampling.tools; another gets -32021', async () => {
    const sampling = { messages: [{ role: 'user', content: { type: 'text', text: 'Weather?' } }], maxTokens: 10, tools: [{ name: 'get_weather', inputSchema: { type: 'object' } }] };
    const call = { name: 'stray-request', arguments: { method: 'sampling/createMessage', params: sampling } };
    const plain = await modernPost(gw.url(), 'tools/call', call, { caps: { sampling: {} } });
    assert.equal(plain.status, 400, JSON.stringify(plain.body));
    assert.equal(plain.body.error?.code, -32021);
    assert.deepEqual(plain.body.error.data?.requiredCapabilities, { sampling: { tools: {} } });
    const withTools = inputRound(await modernPost(gw.url(), 'tools/call', call, { caps: { sampling: { tools: {} } } }));
    assert.equal(withTools.method, 'sampling/createMessage');
    assert.equal(withTools.params.tools[0].name, 'get_weather');
    // A 2025 session that declared sampling without tools: the upstream is refused, as that client would be.
    const legacy = await connectClient(gw, 'streamable-http');
    try {
      assert.equal(textOf(await legacy.callTool(call)), 'stray refused -32601');
    } finally {
      await legacy.close();
    }
  });
});
