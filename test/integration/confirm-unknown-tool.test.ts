// A confirmation rule asks the user before a call of a tool it matches is sent. A call of a name the
// caller is not shown (one no upstream has, the canonical name of a renamed tool, a tool curation leaves
// out) is never sent: it is answered "Tool <name> not found" whatever the user says. The user was asked
// all the same ("Tool: fs__delete_everything", with the arguments as if they would be sent), and the audit
// said the user accepted it: a model could put any name a rule's glob matches before the user. Found by a
// review, 2026-12-07. The recording stdio server (test/fixtures/recording-server.mjs), the official SDK client.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { textOf } from '../helpers/sdk.js';

const recorder = { name: 'fs', transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/recording-server.mjs'], sandbox: 'none' as const, sharing: 'shared' as const };
const ARGS = { repo: 'acme/site' };

describe('confirmation rules and a name the caller is not shown', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      upstreams: [recorder],
      endpoints: [
        { path: '/mcp', upstreams: ['fs'], prefix: 'always' },
        { path: '/search', upstreams: ['fs'], prefix: 'always', tools: { exposure: 'search', exclude: ['fs__move_file'], overrides: { fs__delete_repo: { name: 'drop_repo' } } } },
      ],
      tenants: [{ name: 'anonymous', endpoints: ['*'], confirm: [{ match: 'fs__delete_*' }, { match: 'fs__move_*' }] }],
    });
  });
  after(() => gw?.close());

  async function connect(path: string): Promise<{ client: Client; asked: string[] }> {
    const client = new Client({ name: 'confirm-unknown', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(String(req.params.message));
      return { action: 'accept', content: { confirm: true } };
    });
    await client.connect(new StreamableHTTPClientTransport(gw.url(path)));
    return { client, asked };
  }

  const notFound = async (p: Promise<unknown>, name: string) => {
    const err = await p.then(
      (r) => assert.fail(`answered: ${JSON.stringify(r)}`),
      (e: unknown) => e,
    );
    assert.ok(err instanceof McpError, String(err));
    assert.equal(err.code, -32602);
    assert.equal(err.message, `MCP error -32602: Tool ${name} not found`);
  };

  it('a name no upstream has is answered as unknown without asking the user', async () => {
    const { client, asked } = await connect('/mcp');
    try {
      await notFound(client.callTool({ name: 'fs__delete_everything', arguments: ARGS }), 'fs__delete_everything');
      assert.deepEqual(asked, []);
      // A tool the caller is shown is still asked about.
      assert.equal(textOf(await client.callTool({ name: 'fs__delete_repo', arguments: ARGS })), `delete_repo ${JSON.stringify(ARGS)}`);
      assert.equal(asked.length, 1);
    } finally {
      await client.close();
    }
  });

  it('search mode: neither a renamed tool\'s canonical name nor a tool curation leaves out is put to the user', async () => {
    const { client, asked } = await connect('/search');
    try {
      await notFound(client.callTool({ name: 'call_tool', arguments: { name: 'fs__delete_repo', arguments: ARGS } }), 'fs__delete_repo');
      await notFound(client.callTool({ name: 'fs__delete_repo', arguments: ARGS }), 'fs__delete_repo');
      await notFound(client.callTool({ name: 'call_tool', arguments: { name: 'fs__move_file', arguments: { source: '/a', destination: '/b' } } }), 'fs__move_file');
      assert.deepEqual(asked, []);
      assert.equal(textOf(await client.callTool({ name: 'call_tool', arguments: { name: 'drop_repo', arguments: ARGS } })), `delete_repo ${JSON.stringify(ARGS)}`);
      assert.equal(asked.length, 1);
      assert.match(asked[0]!, /Tool: "drop_repo"/);
    } finally {
      await client.close();
    }
  });
});
