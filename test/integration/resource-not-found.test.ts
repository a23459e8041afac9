// A denied resource URI is answered exactly like one that does not exist, also where the gateway cannot
// tell without asking: on an endpoint whose resources come from one upstream (every URI goes to it), an
// allowed URI the upstream does not serve is forwarded, and the upstream's own "not found" (the SDK
// server's -32602 "Resource … not found", the spec's -32002) reaches the client as the gateway's one
// answer for a name the caller may not reach. Before, the denial (-32002 with data.uri) and the
// upstream's answer (-32602, no data) differed, so a tenant could map which URIs its policy denies.
// The conformance fixture (the official SDK's McpServer) over stdio, through the official SDK client.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';

const fixture = { name: 'fixture', transport: 'stdio' as const, ...FIXTURE, sharing: 'shared' as const };

/** What a refused read looks like on the wire: code, message, data. */
async function readError(client: Client, uri: string): Promise<{ code: number; message: string; data: unknown }> {
  const err = await client.readResource({ uri }).then(
    (r) => assert.fail(`${uri} was read: ${JSON.stringify(r)}`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof McpError, String(err));
  return { code: err.code, message: err.message, data: err.data };
}

describe('a denied resource reads like an unknown one on a single-upstream endpoint', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let client: Client;
  const logLines: string[] = [];

  before(async () => {
    gw = await startGateway(
      {
        upstreams: [fixture],
        endpoints: [{ path: '/mcp', upstreams: ['fixture'] }],
        // auth mode none: the caller is tenant "anonymous", whose rules these are.
        tenants: [{ name: 'anonymous', endpoints: ['*'], resources: { allow: ['test://*'], deny: ['test://static-binary', 'test://template/secret/*'] } }],
      },
      { logLines },
    );
    client = new Client({ name: 'resource-not-found-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(gw.url('/mcp')));
  });
  after(async () => {
    await client?.close().catch(() => {});
    await gw?.close();
  });

  it('a denied URI and an allowed URI the upstream does not serve get the same answer', async () => {
    const read = await client.readResource({ uri: 'test://static-text' });
    assert.equal(read.contents[0]?.uri, 'test://static-text', 'control: an allowed URI is read');
    const denied = await readError(client, 'test://static-binary');
    const unknown = await readError(client, 'test://no-such-resource');
    assert.deepEqual(denied, { code: -32002, message: 'MCP error -32002: Resource test://static-binary not found', data: { uri: 'test://static-binary' } });
    assert.deepEqual(unknown, { code: -32002, message: 'MCP error -32002: Resource test://no-such-resource not found', data: { uri: 'test://no-such-resource' } });
  });

  it('the same for a URI a template describes: denied, or allowed and not served', async () => {
    const data = JSON.parse(String(((await client.readResource({ uri: 'test://template/public/data' })).contents[0] as { text: string }).text));
    assert.equal(data.id, 'public', 'control: the template serves it');
    const denied = await readError(client, 'test://template/secret/data');
    const unknown = await readError(client, 'test://template/public/other');
    assert.deepEqual(denied.data, { uri: 'test://template/secret/data' });
    assert.deepEqual(unknown, { code: denied.code, message: denied.message.replace('test://template/secret/data', 'test://template/public/other'), data: { uri: 'test://template/public/other' } });
  });
});

describe('resources/subscribe to a URI nothing serves: one upstream or several, the same answer', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  const clients: Client[] = [];

  before(async () => {
    gw = await startGateway({
      upstreams: [fixture, { ...fixture, name: 'other' }],
      endpoints: [
        { path: '/one', upstreams: ['fixture'] },
        { path: '/two', upstreams: ['fixture', 'other'] },
      ],
    });
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => {});
    await gw?.close();
  });

  async function subscribe(path: string, uri: string): Promise<unknown> {
    const client = new Client({ name: 'subscribe-not-found-test', version: '1.0.0' });
    clients.push(client);
    await client.connect(new StreamableHTTPClientTransport(gw.url(path)));
    return client.subscribeResource({ uri }).then(
      (r) => ({ subscribed: r }),
      (e: unknown) => {
        assert.ok(e instanceof McpError, String(e));
        return { code: e.code, message: e.message, data: e.data };
      },
    );
  }

  it('is refused with -32002 on a single-upstream endpoint as on a multi-upstream one (not forwarded and accepted)', async () => {
    assert.deepEqual(await subscribe('/one', 'test://static-text'), { subscribed: {} }, 'control: a listed URI is subscribed');
    assert.deepEqual(await subscribe('/one', 'test://template/public/data'), { subscribed: {} }, 'control: so is one a template describes');
    const expected = { code: -32002, message: 'MCP error -32002: Resource test://no-such-resource not found', data: { uri: 'test://no-such-resource' } };
    assert.deepEqual(await subscribe('/two', 'test://no-such-resource'), expected);
    assert.deepEqual(await subscribe('/one', 'test://no-such-resource'), expected);
  });
});
