// completion/complete on a resource template through the gateway, with a tenant whose resource rules
// allow it: the template is a URI template, not a URI, so its {expressions} (users://{userId}/profile,
// a variable in camelCase where the host goes) are not held to a URI's normal form, while what is
// written around them still is. A real stdio upstream (test/fixtures/template-server.mjs).
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient } from '../helpers/sdk.js';

const FIXTURE = resolve('test/fixtures/template-server.mjs');
const UPSTREAM = { name: 'tpl', transport: 'stdio' as const, command: process.execPath, args: [FIXTURE], sandbox: 'none' as const, sharing: 'shared' as const };

async function refusal(p: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof McpError, String(err));
    return { code: err.code, message: err.message };
  }
  assert.fail('expected the request to be refused');
}

describe('completion/complete on a resource template', () => {
  let gw: RunningGateway;
  let client: Client;

  before(async () => {
    gw = await startGateway({
      upstreams: [UPSTREAM],
      endpoints: [{ path: '/mcp', upstreams: ['tpl'] }],
      tenants: [{ name: 'anonymous', endpoints: ['*'], resources: { allow: ['*'], deny: ['notes://*', 'https://notes.example/*'] } }],
    });
    client = await connectClient(gw, 'streamable-http');
  });
  after(async () => {
    await client?.close();
    await gw?.close();
  });

  const complete = (uri: string) => client.complete({ ref: { type: 'ref/resource', uri }, argument: { name: 'userId', value: 'al' } });

  it('completes a listed, allowed template whose variable stands where the host goes (found by a review)', async () => {
    const listed = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
    assert.deepEqual(listed, ['users://{userId}/profile']);
    // Before: refused as a URI not in normal form ("{userId}" is no lower-case host), answered as an unknown template.
    assert.deepEqual((await complete('users://{userId}/profile')).completion.values, ['users://{userId}/profile:al']);
  });

  it('lists no resource or template a deny pattern hides by another spelling of its URI (found by a review)', async () => {
    // Before: "NOTES://all/2", "https://notes.example:443/3" and "NOTES://all/{id}" were listed, past the
    // deny patterns written for their normal form, though a read or completion of each is refused.
    const resources = (await client.listResources()).resources.map((r) => r.uri);
    assert.deepEqual(resources, ['users://alice/profile']);
    const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
    assert.deepEqual(templates, ['users://{userId}/profile']);
    assert.deepEqual(await refusal(client.readResource({ uri: 'NOTES://all/2' })), { code: -32002, message: 'MCP error -32002: Resource NOTES://all/2 not found' });
  });

  it('reads no URI past a deny pattern by leaving out the path a URL parser supplies (found by a review)', async () => {
    // "https://notes.example?x" is https://notes.example/?x to a URL parser; before, it passed the deny of
    // "https://notes.example/*" and was forwarded (this fixture reads any URI as "read").
    for (const uri of ['https://notes.example?x', 'https://notes.example']) {
      assert.deepEqual(await refusal(client.readResource({ uri })), { code: -32002, message: `MCP error -32002: Resource ${uri} not found` }, uri);
    }
    assert.equal((await client.readResource({ uri: 'users://alice/profile' })).contents[0]?.uri, 'users://alice/profile', 'control: an allowed URI is read');
  });

  it('reads no URI past a deny pattern by user information before its host (found by a review)', async () => {
    // Before: "https://x@notes.example/3" passed the deny of "https://notes.example/*" and was forwarded.
    const uri = 'https://x@notes.example/3';
    assert.deepEqual(await refusal(client.readResource({ uri })), { code: -32002, message: `MCP error -32002: Resource ${uri} not found` });
  });

  it('still refuses a denied template, and one whose written parts are not in normal form, as unknown', async () => {
    assert.deepEqual(await refusal(complete('notes://all/{id}')), { code: -32602, message: 'MCP error -32602: Resource template notes://all/{id} not found' });
    assert.deepEqual(await refusal(complete('Users://{userId}/profile')), { code: -32602, message: 'MCP error -32602: Resource template Users://{userId}/profile not found' });
    assert.deepEqual(await refusal(complete('notes://all/%7Bid%7D/../{id}')), { code: -32602, message: 'MCP error -32602: Resource template notes://all/%7Bid%7D/../{id} not found' });
  });
});
