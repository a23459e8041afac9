// What a tenant is told the endpoint offers is the same in both eras: a kind of the catalogue its rules
// allow nothing of (here: prompts) is left out of a 2025 session's initialize capabilities, as it is left
// out of a 2026-07-28 server/discover. Before, initialize advertised every upstream capability, telling
// a tenant denied every prompt that the endpoint's servers have prompts. The conformance fixture (tools,
// prompts, resources) over stdio; the official SDK client for the 2025 session, a raw POST for discover.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';

const fixture = { name: 'fixture', transport: 'stdio' as const, ...FIXTURE, sharing: 'shared' as const };

describe('initialize offers only the kinds the tenant may see', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  const clients: Client[] = [];

  const connect = async (path: string) => {
    const client = new Client({ name: 'initialize-capabilities-test', version: '1.0.0' });
    clients.push(client);
    await client.connect(new StreamableHTTPClientTransport(gw.url(path)));
    return client;
  };

  before(async () => {
    gw = await startGateway({
      upstreams: [fixture],
      endpoints: [{ path: '/mcp', upstreams: ['fixture'] }],
      // auth mode none: every caller is tenant "anonymous"; it may see tools and resources, no prompt.
      tenants: [{ name: 'anonymous', endpoints: ['*'], prompts: { allow: [] } }],
    });
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => {});
    await gw?.close();
  });

  it('a 2025 session is told what server/discover tells a 2026-07-28 request', async () => {
    const client = await connect('/mcp');
    const caps = client.getServerCapabilities() ?? {};
    assert.ok(caps.tools, 'tools are offered');
    assert.ok(caps.resources, 'resources are offered');
    assert.equal(caps.prompts, undefined, 'the tenant allows no prompt: prompts are not offered');
    const discover = await modernPost(gw.url('/mcp'), 'server/discover', {});
    assert.deepEqual(Object.keys(caps).filter((k) => ['tools', 'prompts', 'resources'].includes(k)).sort(), Object.keys(discover.body.result.capabilities).filter((k) => ['tools', 'prompts', 'resources'].includes(k)).sort());
  });
});
