// A modern upstream that refuses the gateway's own request with the era's codes (-32020 headers, -32022
// version, -32021 capabilities): that is the gateway's upstream failure, not the client's fault, and
// reaches no client as a refusal of its own headers or version (a 2026-07-28 client got HTTP 400 -32020
// or -32022, a 2025 session the raw code). The gateway's own refusals of the client's request stay 400.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startModernServer } from '../helpers/modern-server.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { connectClient } from '../helpers/sdk.js';

const V = '2026-07-28';
const REFUSE = {
  test_simple_text: { code: -32020, message: 'Header mismatch: the Mcp-Param-Region header is required' },
  test_image_content: { code: -32022, message: 'Unsupported protocol version: 2026-07-28', data: { supported: ['2027-01-01'], requested: V } },
  test_audio_content: { code: -32021, message: 'Missing required client capability', data: { requiredCapabilities: { elicitation: { form: {} } } } },
};

async function post(gw: RunningGateway, id: number, name: string, caps: Record<string, unknown> = {}, mcpName = name): Promise<{ status: number; body: any }> {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': V, 'mcp-method': 'tools/call', 'mcp-name': mcpName };
  const body = { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {}, _meta: { 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientCapabilities': caps } } };
  const res = await fetch(gw.url(), { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await res.text();
  const json = (res.headers.get('content-type') ?? '').includes('event-stream') ? JSON.parse(text.split('\n').filter((l) => l.startsWith('data: ')).pop()!.slice(6)) : JSON.parse(text);
  return { status: res.status, body: json };
}

describe('a modern upstream that refuses the gateway\'s request with -32020 / -32021 / -32022', () => {
  let upstream: { child: ChildProcess; url: URL };
  let gw: RunningGateway;
  const logLines: string[] = [];
  before(async () => {
    upstream = await startModernServer({ MODERN_FIXTURE_REFUSE: JSON.stringify(REFUSE) });
    gw = await startGateway(
      {
        pinning: { mode: 'off' },
        upstreams: [{ name: 'modern', transport: 'streamable-http', url: upstream.url.href, sharing: 'shared', pool: { size: 1 } }],
        endpoints: [{ path: '/mcp', upstreams: ['modern'] }],
      },
      { logLines },
    );
  });
  after(async () => {
    await gw.close();
    upstream.child.kill('SIGTERM');
  });

  for (const [tool, code] of [['test_simple_text', -32020], ['test_image_content', -32022]] as const) {
    it(`a 2026-07-28 client gets ${code} from the upstream as the gateway's upstream failure (HTTP 200), logged at warn`, async () => {
      const { status, body } = await post(gw, 1, tool);
      assert.equal(status, 200, JSON.stringify(body));
      assert.equal(body.id, 1);
      assert.equal(body.error?.code, -32000, JSON.stringify(body));
      assert.equal(body.error.data?.code, 'SWB_UPSTREAM_PROTOCOL');
      assert.equal(body.error.data.upstream, 'modern');
      assert.equal(body.error.data.upstreamCode, code);
      assert.match(body.error.message, /upstream "modern" refused the (headers|protocol version) the gateway sent it/);
      const warned = logLines.map((l) => JSON.parse(l)).filter((l) => l.upstreamCode === code);
      assert.equal(warned[0]?.level, 40, logLines.join('\n'));
    });
  }

  it('a 2025 session gets them as the gateway\'s upstream failure too, never the era\'s codes', async () => {
    const client = await connectClient(gw, 'streamable-http');
    try {
      for (const [tool, code] of [['test_simple_text', -32020], ['test_image_content', -32022], ['test_audio_content', -32021]] as const) {
        const err = await client.callTool({ name: tool, arguments: {} }).then(() => undefined, (e: { code?: number; data?: Record<string, unknown> }) => e);
        assert.equal(err?.code, -32000, `${tool}: ${JSON.stringify(err)}`);
        assert.equal(err?.data?.code, 'SWB_UPSTREAM_PROTOCOL');
        assert.equal(err?.data?.upstreamCode, code);
      }
    } finally {
      await client.close();
    }
  });

  it('-32021 reaches a 2025 session whose client did not declare the capability as what it lacks, with no warning (found by a review)', async () => {
    // Before, it was told the upstream "refused the client capabilities the gateway declared to it", and the
    // gateway logged its own fault at warn: what was missing was the client's, declared (or not) at initialize.
    const client = new Client({ name: 'no-elicitation', version: '1.0.0' }, { capabilities: {} });
    await client.connect(new StreamableHTTPClientTransport(gw.url('/mcp')));
    try {
      const before = logLines.length;
      const err = await client.callTool({ name: 'test_audio_content', arguments: {} }).then(() => undefined, (e: { code?: number; message?: string; data?: Record<string, unknown> }) => e);
      assert.equal(err?.code, -32000, JSON.stringify(err));
      assert.equal(err?.data?.code, 'SWB_UPSTREAM_PROTOCOL');
      assert.deepEqual(err?.data?.requiredCapabilities, { elicitation: { form: {} } });
      assert.match(err?.message ?? '', /upstream "modern" needs the "elicitation" capability \(form mode\) of the client, which this session's client did not declare/);
      const warned = logLines.slice(before).map((l) => JSON.parse(l)).filter((l) => l.upstreamCode === -32021 && l.level >= 40);
      assert.deepEqual(warned, []);
    } finally {
      await client.close();
    }
  });

  it('-32021 reaches a 2026-07-28 client that did not declare the capability as the spec\'s 400 -32021; one that declared it gets the gateway\'s failure', async () => {
    const lacking = await post(gw, 2, 'test_audio_content', {});
    assert.equal(lacking.status, 400, JSON.stringify(lacking.body));
    assert.equal(lacking.body.error?.code, -32021);
    assert.deepEqual(lacking.body.error.data?.requiredCapabilities, { elicitation: { form: {} } });
    const declared = await post(gw, 3, 'test_audio_content', { elicitation: { form: {} } });
    assert.equal(declared.status, 200, JSON.stringify(declared.body));
    assert.equal(declared.body.error?.data?.code, 'SWB_UPSTREAM_PROTOCOL');
    assert.deepEqual(declared.body.error.data.requiredCapabilities, { elicitation: { form: {} } });
  });

  it("the gateway's own header refusal of the client's request stays 400 -32020", async () => {
    const { status, body } = await post(gw, 4, 'test_simple_text', {}, 'another_tool');
    assert.equal(status, 400, JSON.stringify(body));
    assert.equal(body.error?.code, -32020);
  });
});
