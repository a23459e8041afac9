// Tenant patterns against names and URIs a client chooses, through a real gateway: a pattern with two
// literals between stars ("*secret*key*") matched as a backtracking regular expression took time
// quadratic in a name it did not match, so one tools/call or resources/read with a long name (the body
// may be 4 MB) held the event loop for minutes to hours and every client of the gateway waited.
// Matched now in time linear in the name.
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient } from '../helpers/sdk.js';

const FIXTURE = resolve('test/fixtures/template-server.mjs');
const UPSTREAM = { name: 'tpl', transport: 'stdio' as const, command: process.execPath, args: [FIXTURE], sandbox: 'none' as const, sharing: 'shared' as const };

async function refusal(p: Promise<unknown>): Promise<number> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof McpError, String(err));
    return err.code;
  }
  assert.fail('expected the request to be refused');
}

describe('tenant patterns on long client-chosen names (found by a review)', () => {
  let gw: RunningGateway;
  let client: Client;

  before(async () => {
    gw = await startGateway({
      upstreams: [UPSTREAM],
      endpoints: [{ path: '/mcp', upstreams: ['tpl'] }],
      tenants: [{ name: 'anonymous', endpoints: ['*'], tools: { allow: ['*'], deny: ['*secret*key*'] }, resources: { allow: ['*'], deny: ['*secret*key*'] } }],
    });
    client = await connectClient(gw, 'streamable-http');
  });
  after(async () => {
    await client?.close();
    await gw?.close();
  });

  // About 1.5 MB each: under the body limit. Matched by backtracking, each took tens of minutes; the
  // test's own timeout only turns that hang into a failure (the answer itself takes milliseconds).
  const long = 'secret'.repeat(250_000);

  it('a tools/call and a resources/read with a long name are judged without holding the gateway', { timeout: 120_000 }, async () => {
    // Not denied (no "key" in either): the call names no tool of the upstream, the read is forwarded.
    assert.equal(await refusal(client.callTool({ name: long, arguments: {} })), -32602);
    assert.equal(((await client.readResource({ uri: `notes://all/${long}` })).contents[0] as { text?: string }).text, 'read');
    // Still matched: the pattern's literals in order, anything between.
    assert.equal(await refusal(client.callTool({ name: 'my_secret_api_key', arguments: {} })), -32602);
    assert.equal(await refusal(client.readResource({ uri: 'notes://all/secret/key' })), -32002);
  });
});
