// A sampling request's includeContext asks the client to attach context "from one or more MCP servers
// (including the caller)". Through the gateway the client's one server is the gateway: "thisServer" is every
// upstream of the endpoint, "allServers" everything else the host is connected to as well. The gateway never
// declares sampling.context to an upstream (a server that is not told it SHOULD send only "none"), yet an
// upstream's "thisServer" or "allServers" was relayed as written (found by a review): one upstream could have
// the client's model read what the others returned, and its answer carry it back. Now it is relayed as
// "none", in both eras and from both upstream eras. A real gateway on a real port, the params-recording stdio
// fixture as a 2025 and a 2026-07-28 upstream, the official SDK 1.x client and raw 2026-07-28 POSTs.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { inputRound, modernPost } from '../helpers/modern-http.js';
import { connectClient } from '../helpers/sdk.js';

const FIXTURE = { transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/params-recording-server.mjs'], sandbox: 'none' as const, sharing: 'shared' as const };
const sampling = (includeContext: string) => ({ method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5, includeContext } });

describe('an upstream sampling request that asks for the context of other servers', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let client: Client;
  const asked: Array<Record<string, unknown>> = [];

  before(async () => {
    gw = await startGateway({
      upstreams: [
        { name: 'legacy', ...FIXTURE },
        { name: 'modern', ...FIXTURE, args: [...FIXTURE.args, '--modern'], era: 'modern' },
      ],
      endpoints: [{ path: '/mcp', upstreams: ['legacy', 'modern'] }],
    });
    client = await connectClient(gw, 'streamable-http');
    client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      asked.push(req.params);
      return { model: 'm', role: 'assistant', content: { type: 'text', text: 'ok' } };
    });
  });
  after(async () => {
    await client?.close();
    await gw?.close();
  });

  for (const upstream of ['legacy', 'modern']) {
    for (const includeContext of ['thisServer', 'allServers']) {
      it(`${upstream} upstream, "${includeContext}": a 2025 client is asked with "none"`, async () => {
        asked.length = 0;
        await client.callTool({ name: `${upstream}__ask`, arguments: sampling(includeContext) });
        assert.equal(asked.length, 1);
        assert.equal(asked[0]!.includeContext, 'none');
      });
    }
  }

  it('"none" and an absent includeContext go as they are', async () => {
    asked.length = 0;
    await client.callTool({ name: 'legacy__ask', arguments: sampling('none') });
    await client.callTool({ name: 'legacy__ask', arguments: { method: 'sampling/createMessage' } });
    assert.deepEqual(asked.map((p) => p.includeContext), ['none', undefined]);
  });

  // Last: its round holds the call on the shared legacy instance (no retry is sent), whose next question no one could be told to own.
  it('a 2026-07-28 client\'s input round asks with "none"', async () => {
    const round = inputRound(await modernPost(gw.url(), 'tools/call', { name: 'legacy__ask', arguments: sampling('allServers') }));
    assert.equal(round.method, 'sampling/createMessage');
    assert.equal(round.params.includeContext, 'none');
  });
});
