// test/fixtures/modern-server.mjs (SDK v2, modern-only) driven by the SDK v2 client pinned to
// 2026-07-28: the same client a modern MCP host uses, so what passes here is what the gateway's
// modern edge has to look like. Real process, real HTTP port.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { Client, SdkHttpError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startModernServer } from '../helpers/modern-server.js';
import { until } from '../helpers/wait.js';

const PIN = { versionNegotiation: { mode: { pin: '2026-07-28' as const } } };

describe('modern fixture (SDK v2 server) through the SDK v2 client pinned to 2026-07-28', () => {
  let fixture: { child: ChildProcess; url: URL };
  const clients: Client[] = [];
  const connect = async (options: ConstructorParameters<typeof Client>[1]) => {
    const client = new Client({ name: 'modern-fixture-test', version: '1.0.0' }, options);
    clients.push(client);
    await client.connect(new StreamableHTTPClientTransport(fixture.url));
    return client;
  };

  before(async () => {
    fixture = await startModernServer();
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    fixture.child.kill('SIGTERM');
  });

  it('connects on the modern era, lists tools and calls one', async () => {
    const client = await connect(PIN);
    assert.equal(client.getProtocolEra(), 'modern');
    assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
    const { tools } = await client.listTools();
    for (const name of ['test_simple_text', 'test_input_required_result_elicitation', 'test_trigger_tool_change']) {
      assert.ok(tools.some((t) => t.name === name), `${name} is listed`);
    }
    const result = await client.callTool({ name: 'test_simple_text' });
    assert.deepEqual(result.content, [{ type: 'text', text: 'This is a simple text response for testing.' }]);
  });

  it('completes an input_required round through the elicitation handler', async () => {
    const client = await connect({ ...PIN, capabilities: { elicitation: { form: {} } } });
    const asked: string[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { name: 'Alice' } };
    });
    const result = await client.callTool({ name: 'test_input_required_result_elicitation' });
    assert.deepEqual(asked, ['What is your name?']);
    assert.deepEqual(result.content, [{ type: 'text', text: 'Hello, Alice!' }]);
  });

  it('rejects the call with -32021 when the request does not declare a needed capability', async () => {
    const client = await connect(PIN); // declares no sampling
    await assert.rejects(client.callTool({ name: 'test_missing_capability' }), (err: { code?: number }) => err.code === -32021);
  });

  it('delivers list changes on a subscriptions/listen stream', async () => {
    const client = await connect(PIN);
    let changes = 0;
    client.setNotificationHandler('notifications/tools/list_changed', async () => void changes++);
    const subscription = await client.listen({ toolsListChanged: true });
    assert.deepEqual(subscription.honoredFilter, { toolsListChanged: true });
    await client.callTool({ name: 'test_trigger_tool_change' });
    await until('notifications/tools/list_changed on the listen stream', () => changes === 1);
    await subscription.close();
    assert.equal(await subscription.closed, 'local');
  });

  it('refuses a 2025-era client (legacy: reject) with -32022 naming the supported version', async () => {
    // The default client mode is 'legacy': a plain initialize, answered HTTP 400 + UnsupportedProtocolVersion.
    await assert.rejects(connect({}), (err) => err instanceof SdkHttpError && /-32022.*"supported":\["2026-07-28"\]/.test(err.message));
  });
});
