// A confirmation rule's refusal of a call by a curation rename: the error named the rule by its glob, written
// over canonical names (`confirmation rule "fs__delete_repo"`, data.rule), so a client that called
// "drop_repo" was told the name the rename keeps from it, as every other refusal of that call does not
// (policy, argument rules, tool pinning name the tool as called). Found by a review, 2026-12-07. The recording
// stdio server (test/fixtures/recording-server.mjs), the official SDK client.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';

const recorder = { name: 'fs', transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/recording-server.mjs'], sandbox: 'none' as const, sharing: 'shared' as const };
const ARGS = { repo: 'acme/site' };

describe('a confirmation rule refusing a call by a rename names no canonical name', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      upstreams: [recorder],
      endpoints: [{ path: '/mcp', upstreams: ['fs'], prefix: 'always', tools: { overrides: { fs__delete_repo: { name: 'drop_repo' } } } }],
      tenants: [{ name: 'anonymous', endpoints: ['*'], confirm: [{ match: 'fs__delete_repo', ifUnsupported: 'refuse' }] }],
    });
  });
  after(() => gw?.close());

  async function refusalOf(elicitation: boolean): Promise<McpError> {
    const client = new Client({ name: 'confirm-renamed', version: '1.0.0' }, { capabilities: elicitation ? { elicitation: { form: {} } } : {} });
    if (elicitation) client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'decline' }));
    await client.connect(new StreamableHTTPClientTransport(gw.url('/mcp')));
    try {
      const err = await client.callTool({ name: 'drop_repo', arguments: ARGS }).then(
        (r) => assert.fail(`answered: ${JSON.stringify(r)}`),
        (e: unknown) => e,
      );
      assert.ok(err instanceof McpError, String(err));
      return err;
    } finally {
      await client.close();
    }
  }

  it('declined, and unsupported: the tool named as called, the rule by no glob', async () => {
    for (const elicitation of [true, false]) {
      const err = await refusalOf(elicitation);
      const told = `${err.message} ${JSON.stringify(err.data)}`;
      assert.doesNotMatch(told, /delete_repo/, told);
      assert.match(err.message, /tool "drop_repo" \(a confirmation rule\)/);
      assert.equal((err.data as Record<string, unknown>).tool, 'drop_repo');
    }
  });
});
