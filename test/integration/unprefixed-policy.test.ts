// Tenant patterns written with the prefix (`<upstream>__<tool>`, as on endpoints that aggregate) apply
// on an endpoint that shows its one upstream unprefixed too: a deny there let the tool be listed and
// called under its bare name (found by a review).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient } from '../helpers/sdk.js';

describe('prefixed tenant patterns on an unprefixed endpoint', () => {
  let gw: RunningGateway;
  let client: Client;
  before(async () => {
    gw = await startGateway({
      upstreams: [{ name: 'fixture', transport: 'stdio', ...FIXTURE, sharing: 'shared' }],
      endpoints: [{ path: '/solo', upstreams: ['fixture'] }],
      tenants: [{ name: 'anonymous', endpoints: ['*'], tools: { allow: ['*'], deny: ['fixture__test_simple_text'] }, prompts: { allow: ['*'], deny: ['fixture__test_simple_prompt'] } }],
    });
    client = await connectClient(gw, 'streamable-http', { path: '/solo' });
  });
  after(async () => {
    await client?.close();
    await gw?.close();
  });

  it('a denied tool is neither listed nor callable by its bare name; a denied prompt is not listed', async () => {
    const tools = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(tools.includes('test_image_content'), `the endpoint shows its tools unprefixed: ${tools.join(', ')}`);
    assert.ok(!tools.includes('test_simple_text'), 'the denied tool is listed');
    await assert.rejects(client.callTool({ name: 'test_simple_text', arguments: {} }), /-32602|not found/);
    const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
    assert.ok(!prompts.includes('test_simple_prompt'), 'the denied prompt is listed');
  });
});
