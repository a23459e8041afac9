// A modern-only upstream (test/fixtures/modern-server.mjs: SDK v2, legacy clients rejected) behind the
// gateway: legacy clients (SDK 1.x, both transports) keep working in front of it, its input_required
// rounds reaching them as real server→client requests; modern clients get the rounds as their own.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startModernServer } from '../helpers/modern-server.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectClient, textOf } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const V = '2026-07-28';

async function modernPost(gw: RunningGateway, id: number, method: string, params: Record<string, unknown>, caps: Record<string, unknown> = {}): Promise<any> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': V, 'mcp-method': method };
  if (typeof params.name === 'string') headers['mcp-name'] = params.name;
  const body = { jsonrpc: '2.0', id, method, params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientCapabilities': caps } } };
  const res = await fetch(gw.url(), { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await res.text();
  return (res.headers.get('content-type') ?? '').includes('event-stream') ? JSON.parse(text.split('\n').filter((l) => l.startsWith('data: ')).pop()!.slice(6)) : JSON.parse(text);
}

for (const sharing of ['shared', 'per-session'] as const) {
  describe(`a modern-only upstream behind the gateway (${sharing})`, () => {
    let upstream: { child: ChildProcess; url: URL };
    let gw: RunningGateway;
    before(async () => {
      upstream = await startModernServer();
      gw = await startGateway({
        pinning: { mode: 'off' },
        upstreams: [{ name: 'modern', transport: 'streamable-http', url: upstream.url.href, sharing, pool: sharing === 'shared' ? { size: 1 } : { size: 1, warm: 0, max: 10 } }],
        endpoints: [{ path: '/mcp', upstreams: ['modern'] }],
      });
    });
    after(async () => {
      await gw.close();
      upstream.child.kill('SIGTERM');
    });

    for (const kind of ['streamable-http', 'sse'] as const) {
      it(`an SDK 1.x client (${kind}) lists, calls, and answers the upstream's elicitation as a real request`, async () => {
        const client = await connectClient(gw, kind);
        try {
          const { tools } = await client.listTools();
          assert.ok(tools.some((t) => t.name === 'test_input_required_result_elicitation'));
          assert.ok(!('ttlMs' in (await client.listTools())), 'a legacy client sees no modern-era fields');
          const plain = await client.callTool({ name: 'test_simple_text', arguments: {} });
          assert.match(textOf(plain), /simple text/);
          const elicited = await client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} });
          assert.match(textOf(elicited), /Ada/, 'the answer of the client\'s elicitation handler reached the upstream');
        } finally {
          await client.close();
        }
      });
    }

    it("an SDK 1.x client gets the upstream's URL-mode input request with the elicitationId its revision requires", async () => {
      const client = new Client({ name: 'url-mode', version: '1.0.0' }, { capabilities: { elicitation: { form: {}, url: {} } } });
      const asked: Array<Record<string, unknown>> = [];
      client.setRequestHandler(ElicitRequestSchema, async (req) => (asked.push(req.params), { action: 'accept' }));
      await client.connect(new StreamableHTTPClientTransport(gw.url()));
      try {
        const r = await client.callTool({ name: 'test_elicitation_url', arguments: {} });
        assert.match(textOf(r), /URL elicitation finished: accept/, JSON.stringify(r));
        assert.equal(asked[0]?.url, 'https://example.com/consent');
        assert.equal(typeof asked[0]?.elicitationId, 'string');
      } finally {
        await client.close();
      }
    });

    it('tells the upstream what the client behind the call declared: one that declared nothing is asked nothing', async () => {
      const bare = new Client({ name: 'bare', version: '1.0.0' }, { capabilities: {} });
      await bare.connect(new StreamableHTTPClientTransport(gw.url()));
      try {
        const r = await bare.callTool({ name: 'test_input_required_result_capabilities', arguments: {} });
        assert.equal(textOf(r), 'No supported capabilities declared');
      } finally {
        await bare.close();
      }
      // A 2026-07-28 request declares its own, request by request.
      const m = await modernPost(gw, 77, 'tools/call', { name: 'test_input_required_result_capabilities', arguments: {} }, {});
      assert.equal(m.result?.content?.[0]?.text, 'No supported capabilities declared', JSON.stringify(m));
      // The SDK helper's client declares sampling and form elicitation, and answers both.
      const full = await connectClient(gw, 'streamable-http');
      try {
        assert.equal(textOf(await full.callTool({ name: 'test_input_required_result_capabilities', arguments: {} })), 'capabilities-ok: received elicit_input,sample_input');
      } finally {
        await full.close();
      }
    });

    it("puts a round's input requests to a modern client in one round, not one round each", async () => {
      const caps = { elicitation: { form: {} }, sampling: {}, roots: {} };
      const params = { name: 'test_input_required_result_multiple_inputs', arguments: {} };
      const first = await modernPost(gw, 80, 'tools/call', params, caps);
      if (sharing === 'shared') {
        // A shared instance serves many clients: it is never told of roots (whose would they be?), so
        // the upstream itself refuses a tool that asks for them.
        assert.deepEqual(first.error?.data?.requiredCapabilities, { roots: {} }, JSON.stringify(first));
        return;
      }
      assert.equal(first.result?.resultType, 'input_required', JSON.stringify(first));
      const asks = first.result.inputRequests as Record<string, { method: string }>;
      assert.deepEqual(Object.values(asks).map((a) => a.method).sort(), ['elicitation/create', 'roots/list', 'sampling/createMessage'], JSON.stringify(asks));
      const answerOf = (method: string) =>
        method === 'elicitation/create' ? { action: 'accept', content: { name: 'Alice' } }
        : method === 'sampling/createMessage' ? { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'test' }
        : { roots: [{ uri: 'file:///work' }] };
      const inputResponses = Object.fromEntries(Object.entries(asks).map(([k, a]) => [k, answerOf(a.method)]));
      const done = await modernPost(gw, 81, 'tools/call', { ...params, inputResponses, requestState: first.result.requestState }, caps);
      assert.equal(done.result?.content?.[0]?.text, 'Name: Alice; Greeting: Paris; Roots: 1', JSON.stringify(done));
    });

    it('mirrors x-mcp-header arguments into Mcp-Param-* for the upstream (which checks them), non-ASCII included', async () => {
      const client = await connectClient(gw, 'streamable-http');
      try {
        const r = await client.callTool({ name: 'test_x_mcp_header', arguments: { region: 'Zürich ' } });
        assert.equal(r.isError, undefined, JSON.stringify(r));
        assert.equal(textOf(r), 'Region: Zürich ');
      } finally {
        await client.close();
      }
    });

    it('resource subscriptions reach the modern upstream through its listen stream, and its updates reach the subscriber', async () => {
      const client = await connectClient(gw, 'streamable-http');
      const updates: string[] = [];
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
      try {
        await client.subscribeResource({ uri: 'test://watched-resource' });
        // The listen stream is opened again with the new set: trigger until an update arrives (bounded).
        await until('an update of the subscribed resource', async () => {
          await client.callTool({ name: 'test_trigger_resource_change', arguments: { uri: 'test://watched-resource' } });
          return updates.includes('test://watched-resource');
        });
        await client.unsubscribeResource({ uri: 'test://watched-resource' });
      } finally {
        await client.close();
      }
    });

    it('a legacy client cancelling a call to the modern upstream closes its stream there', async () => {
      const client = await connectClient(gw, 'streamable-http');
      try {
        const ac = new AbortController();
        const call = client.callTool({ name: 'test_wait_for_cancel', arguments: {} }, undefined, { signal: ac.signal });
        const counts = async () => textOf(await client.callTool({ name: 'test_cancelled_count', arguments: {} }));
        const before = Number(/cancelled (\d+)/.exec(await counts())![1]);
        await until('the call reached the upstream', async () => /started [1-9]/.test(await counts()));
        ac.abort();
        await assert.rejects(call);
        await until('the upstream saw the cancellation', async () => (await counts()).endsWith(`cancelled ${before + 1}`));
      } finally {
        await client.close();
      }
    });

    it('a modern client gets the upstream\'s input requests as its own rounds', async () => {
      const caps = { elicitation: { form: {} } };
      const first = await modernPost(gw, 1, 'tools/call', { name: 'test_input_required_result_elicitation', arguments: {} }, caps);
      assert.equal(first.result.resultType, 'input_required');
      const [key, ask] = Object.entries(first.result.inputRequests as Record<string, { method: string }>)[0]!;
      assert.equal(ask.method, 'elicitation/create');
      const done = await modernPost(gw, 2, 'tools/call', { name: 'test_input_required_result_elicitation', arguments: {}, inputResponses: { [key]: { action: 'accept', content: { name: 'Grace' } } }, requestState: first.result.requestState }, caps);
      assert.equal(done.result.resultType, 'complete');
      assert.match(JSON.stringify(done.result.content), /Grace/);
    });
  });
}

describe('an upstream that speaks neither era', () => {
  it('is reported as incompatible, with the reason, not as restarting', async () => {
    // An HTTP server that answers every POST with a plain 400 and no JSON-RPC: neither discover nor initialize works.
    const { createServer } = await import('node:http');
    const server = createServer((req, res) => void req.resume().on('end', () => res.writeHead(400, { 'content-type': 'text/plain' }).end('nope')));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const gw = await startGateway({
      upstreams: [{ name: 'odd', transport: 'streamable-http', url: `http://127.0.0.1:${port}/mcp`, sharing: 'shared', pool: { size: 1 }, restart: { initialDelayMs: 60_000, maxDelayMs: 60_000 } }],
      endpoints: [{ path: '/mcp', upstreams: ['odd'] }],
    });
    try {
      const r = await modernPost(gw, 1, 'tools/call', { name: 'x', arguments: {} });
      assert.ok(r.error, JSON.stringify(r));
      assert.match(r.error.message, /incompatible/);
      assert.doesNotMatch(r.error.message, /retry shortly|restarting/);
    } finally {
      await gw.close();
      server.close();
    }
  });
});

describe('a modern upstream that lists tools with invalid x-mcp-header annotations', () => {
  let upstream: { child: ChildProcess; url: URL };
  let gw: RunningGateway;
  const logLines: string[] = [];
  before(async () => {
    upstream = await startModernServer({ MODERN_FIXTURE_INVALID_HEADERS: '1' });
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

  it('leaves those tools out of every list, keeps the valid ones, and says why once per tool', async () => {
    const client = await connectClient(gw, 'streamable-http');
    try {
      for (let i = 0; i < 2; i++) {
        const names = (await client.listTools()).tools.map((t) => t.name);
        assert.ok(names.includes('test_x_mcp_header') && names.includes('test_simple_text'), names.join(','));
        for (const bad of ['test_x_mcp_header_number', 'test_x_mcp_header_bad_name', 'test_x_mcp_header_twice']) assert.ok(!names.includes(bad), `${bad} is left out`);
      }
      const modern = await modernPost(gw, 90, 'tools/list', {});
      assert.ok(!modern.result.tools.some((t: { name: string }) => t.name.startsWith('test_x_mcp_header_')), 'a modern client is not shown them either');
    } finally {
      await client.close();
    }
    const warned = logLines.filter((l) => l.includes('x-mcp-header annotations are invalid'));
    assert.deepEqual(warned.map((l) => JSON.parse(l).tool).sort(), ['test_x_mcp_header_bad_name', 'test_x_mcp_header_number', 'test_x_mcp_header_twice'], warned.join('\n'));
  });
});

describe('a modern upstream that annotates a tool parameter with x-mcp-header without a list_changed', () => {
  let upstream: { child: ChildProcess; url: URL };
  let gw: RunningGateway;
  before(async () => {
    upstream = await startModernServer({ MODERN_FIXTURE_ANNOTATE_LATER: '1' });
    gw = await startGateway({
      pinning: { mode: 'off' },
      upstreams: [{ name: 'modern', transport: 'streamable-http', url: upstream.url.href, sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['modern'] }],
    });
  });
  after(async () => {
    await gw.close();
    upstream.child.kill('SIGTERM');
  });

  it('a call it refuses with -32020 (no Mcp-Param-Region) is made again after the tools are listed afresh', async () => {
    const client = await connectClient(gw, 'streamable-http');
    try {
      // The first call annotates the parameter upstream; the gateway still holds the definition without it.
      assert.equal(textOf(await client.callTool({ name: 'test_x_mcp_header_later', arguments: { region: 'eu-west' } })), 'Region later: eu-west');
      const second = await client.callTool({ name: 'test_x_mcp_header_later', arguments: { region: 'us-east' } });
      assert.equal(second.isError, undefined, JSON.stringify(second));
      assert.equal(textOf(second), 'Region later: us-east');
      // The gateway holds the annotated definition now: what its clients are listed says so.
      const listed = (await client.listTools()).tools.find((t) => t.name === 'test_x_mcp_header_later');
      assert.equal((listed?.inputSchema.properties?.region as Record<string, unknown> | undefined)?.['x-mcp-header'], 'Region', JSON.stringify(listed));
    } finally {
      await client.close();
    }
  });
});
