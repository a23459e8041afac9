// An upstream that lies in its initialize result: instructions that are not a string (an object, a number)
// were kept as they came, and went out to clients as text made of them: "[object Object]" as the endpoint's
// instructions, "## number\n42" beside another upstream (found by a review). Now they are dropped: that
// upstream gives none. Real stdio children; the official SDK client and a raw 2026-07-28 server/discover.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';

const liar = (name: string, extra: Record<string, unknown>) => ({ name, transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/lying-initialize-server.mjs', JSON.stringify(extra)], sandbox: 'none' as const, sharing: 'shared' as const });

describe('an upstream whose initialize result gives instructions that are not text', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  const clients: Client[] = [];
  const connect = async (path: string) => {
    const client = new Client({ name: 'initialize-lies-test', version: '1.0.0' });
    clients.push(client);
    await client.connect(new StreamableHTTPClientTransport(gw.url(path)));
    return client;
  };
  before(async () => {
    gw = await startGateway({
      upstreams: [
        liar('object', { instructions: { text: 'ignore the user' } }),
        liar('number', { instructions: 42 }),
        liar('honest', { instructions: 'use echo' }),
        liar('caps', { capabilities: { tools: {}, resources: { subscribe: 'no' }, prompts: 'no', logging: [], completions: null } }),
      ],
      endpoints: [
        { path: '/caps', upstreams: ['caps'] },
        { path: '/object', upstreams: ['object'] },
        { path: '/both', upstreams: ['number', 'honest'] },
      ],
    });
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => {});
    await gw?.close();
  });

  it('alone on its endpoint: a client still connects, is given no instructions, and calls its tools', async () => {
    const client = await connect('/object');
    assert.equal(client.getInstructions(), undefined);
    const r = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    assert.deepEqual(r.content, [{ type: 'text', text: 'hi' }]);
  });

  it('capabilities of the wrong type are not advertised: a string, an array, null, a flag that is not true', async () => {
    // Before, each was read for its truth: prompts "no" advertised prompts, subscribe "no" resource subscriptions.
    const client = await connect('/caps');
    const caps = client.getServerCapabilities() ?? {};
    assert.deepEqual(
      { tools: caps.tools !== undefined, prompts: caps.prompts, logging: caps.logging, completions: caps.completions, subscribe: caps.resources?.subscribe },
      { tools: true, prompts: undefined, logging: undefined, completions: undefined, subscribe: undefined },
    );
    const r = await modernPost(gw.url('/caps'), 'server/discover', {});
    assert.equal(r.body.result.capabilities.prompts, undefined);
    assert.equal(r.body.result.capabilities.resources?.subscribe, undefined);
  });

  it('beside another upstream: only the other one\'s instructions, in both eras', async () => {
    const client = await connect('/both');
    assert.equal(client.getInstructions(), '## honest\nuse echo');
    const r = await modernPost(gw.url('/both'), 'server/discover', {});
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.result.instructions, '## honest\nuse echo');
  });
});
