// Search mode and tracing: a tools/call the tools stage routes (call_tool, or a direct call by name on a
// search-mode endpoint) is traced as any other call, through a real OTLP receiver: a policy refusal adds
// its policy.denied event to the request's SERVER span (README "Tracing").
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startOtlpReceiver } from '../helpers/otlp-receiver.js';

const SERVER = 2;
const catalogue = (name: string, ...args: string[]) => ({ name, transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/catalogue-server.mjs', ...args], sandbox: 'none' as const });
const hex = (bytes: number) => [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');

describe('search mode and tracing', () => {
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let gw: RunningGateway;

  before(async () => {
    receiver = await startOtlpReceiver();
    gw = await startGateway({
      tracing: { enabled: true, endpoint: receiver.url, protocol: 'http/json' },
      upstreams: [catalogue('gh', '--set', 'issues')],
      endpoints: [{ path: '/mcp', upstreams: ['gh'], tools: { exposure: 'search' } }],
      tenants: [{ name: 'anonymous', endpoints: ['*'], tools: { allow: ['*'], deny: ['delete_*'] } }],
    });
  });
  after(async () => {
    await gw?.close();
    await receiver?.close();
  });

  it('a denied call, through call_tool or by name, has the policy.denied event a call elsewhere has', async () => {
    for (const call of [{ name: 'call_tool', arguments: { name: 'delete_repository', arguments: {} } }, { name: 'delete_repository', arguments: {} }]) {
      const trace = hex(16);
      const client = new Client({ name: 'search-tracing', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(gw.url('/mcp'), { requestInit: { headers: { traceparent: `00-${trace}-${hex(8)}-01` } } }));
      await assert.rejects(client.callTool(call), /Tool delete_repository not found/);
      await gw.app.tracing.flush();
      const spans = await receiver.trace(trace, (s) => s.some((x) => x.kind === SERVER && x.name.startsWith('tools/call')));
      const server = spans.find((s) => s.kind === SERVER && s.name.startsWith('tools/call'))!;
      assert.deepEqual(server.events.map((e) => e.name), ['policy.denied'], `${call.name}: ${JSON.stringify(server.events)}`);
      await client.close();
    }
  });

  it("a call through call_tool names the tool it runs (gen_ai.tool.name), and the meta-tool it came through", async () => {
    const trace = hex(16);
    const client = new Client({ name: 'search-tracing', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(gw.url('/mcp'), { requestInit: { headers: { traceparent: `00-${trace}-${hex(8)}-01` } } }));
    await client.callTool({ name: 'call_tool', arguments: { name: 'searchCode', arguments: { q: 'x' } } });
    await gw.app.tracing.flush();
    const spans = await receiver.trace(trace, (s) => s.some((x) => x.kind === SERVER && x.name.startsWith('tools/call')));
    const server = spans.find((s) => s.kind === SERVER && s.name.startsWith('tools/call'))!;
    assert.equal(server.name, 'tools/call searchCode', JSON.stringify(server.attributes));
    assert.equal(server.attributes['gen_ai.tool.name'], 'searchCode');
    assert.equal(server.attributes['switchboard.meta_tool'], 'call_tool');
    await client.close();
  });

  it('a client-sized tool name given to call_tool is cut in gen_ai.tool.name, as a direct call\'s is (the SDK\'s own cut keeps the whole name alive in the export queue)', async () => {
    const trace = hex(16);
    const client = new Client({ name: 'search-tracing', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(gw.url('/mcp'), { requestInit: { headers: { traceparent: `00-${trace}-${hex(8)}-01` } } }));
    await assert.rejects(client.callTool({ name: 'call_tool', arguments: { name: 'n'.repeat(200_000), arguments: {} } }), /not found/);
    await gw.app.tracing.flush();
    const spans = await receiver.trace(trace, (s) => s.some((x) => x.kind === SERVER && x.name.startsWith('tools/call')));
    const server = spans.find((s) => s.kind === SERVER && s.name.startsWith('tools/call'))!;
    const name = String(server.attributes['gen_ai.tool.name']);
    assert.ok(name.length <= 300 && name.endsWith('…'), `gen_ai.tool.name of ${name.length} characters`);
    await client.close();
  });
});
