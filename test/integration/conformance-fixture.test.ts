// The 2025 stdio fixture's tools for the 2026-07-28 scenarios (test/fixtures/modern-scenario-tools.mjs)
// make real server→client requests mid-call, each tagged with the inputRequests key the scenario
// expects. A gateway's MRTR bridge relies on both: this pins them with the SDK 1.x client.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'conformance-server.mjs');
const KEY = 'dev.switchboard/inputKey';

describe('conformance fixture: modern-scenario tools in their 2025 form', () => {
  const client = new Client({ name: 'fixture-test', version: '1.0.0' }, { capabilities: { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} } });
  const asked: string[] = [];
  const keyOf = (params: { _meta?: Record<string, unknown> } | undefined) => String(params?._meta?.[KEY]);

  before(async () => {
    client.setRequestHandler(ElicitRequestSchema, async (r) => {
      asked.push(`elicit:${keyOf(r.params)}`);
      return { action: 'accept', content: { name: 'Alice', color: 'blue', ok: true, value: 'v', context: 'ctx' } };
    });
    client.setRequestHandler(CreateMessageRequestSchema, async (r) => {
      asked.push(`sample:${keyOf(r.params)}`);
      return { role: 'assistant', model: 'test', content: { type: 'text', text: 'Paris' } };
    });
    client.setRequestHandler(ListRootsRequestSchema, async (r) => {
      asked.push(`roots:${keyOf(r.params)}`);
      return { roots: [{ uri: 'file:///test/root', name: 'Test Root' }] };
    });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [FIXTURE], stderr: 'ignore' }));
  });
  after(() => client.close());

  const call = async (name: string) => {
    asked.length = 0;
    const result = await client.callTool({ name, arguments: {} });
    return (result.content as { text: string }[])[0]!.text;
  };

  it('asks with the key the scenario expects, and answers from the reply', async () => {
    assert.equal(await call('test_input_required_result_elicitation'), 'Hello, Alice!');
    assert.deepEqual(asked, ['elicit:user_name']);
    assert.equal(await call('test_input_required_result_sampling'), 'Sampling result: Paris');
    assert.deepEqual(asked, ['sample:capital_question']);
  });

  it('sends the three inputs of multiple-input-requests concurrently, and multi-round ones in sequence', async () => {
    assert.equal(await call('test_input_required_result_multiple_inputs'), 'Name: Alice; Greeting: Paris; Roots: 1');
    assert.deepEqual([...asked].sort(), ['elicit:user_name', 'roots:client_roots', 'sample:greeting']);
    assert.equal(await call('test_input_required_result_multi_round'), 'Multi-round complete for Alice who likes blue');
    assert.deepEqual(asked, ['elicit:step1', 'elicit:step2']);
  });

  it('asks only for what forwarded modern clientCapabilities declare', async () => {
    asked.length = 0;
    const result = await client.callTool({
      name: 'test_input_required_result_capabilities',
      arguments: {},
      _meta: { 'io.modelcontextprotocol/clientCapabilities': { sampling: {} } },
    });
    assert.deepEqual(asked, ['sample:sample_input']);
    assert.deepEqual(result.content, [{ type: 'text', text: 'capabilities-ok: received sample_input' }]);
  });

  it('puts the elicitation of the MRTR prompt behind prompts/get', async () => {
    asked.length = 0;
    const prompt = await client.getPrompt({ name: 'test_input_required_result_prompt' });
    assert.deepEqual(asked, ['elicit:user_context']);
    assert.deepEqual(prompt.messages, [{ role: 'user', content: { type: 'text', text: 'Prompt with context: ctx' } }]);
  });
});
