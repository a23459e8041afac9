// Confirmation rules meet tool-definition pinning (found by a review, 2026-12-07): a tool pinning withholds
// (here its config pin does not match) was put to the user for confirmation first, and only after the user
// accepted was the call refused SWB_TOOL_WITHHELD: the user was asked about a call that could never run.
// Now the user is not asked; the call is refused with pinning's own error and audit rule, as without a
// confirmation rule. A tool pinning lets through is still asked about. Both eras: the official SDK client
// on Streamable HTTP, and raw 2026-07-28 POSTs (no input_required round). The recording stdio server
// (test/fixtures/recording-server.mjs) says which calls reached it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { toolPinHash } from '../../src/policy/tool-pin-hash.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { inputRound, modernPost } from '../helpers/modern-http.js';
import { textOf } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

type Json = Record<string, any>;

const recorder = { name: 'fs', transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/recording-server.mjs'], sandbox: 'none' as const, sharing: 'shared' as const };
const WRONG = '0'.repeat(64);
/** The fixture's tools as it lists them: every one pinned as it is, but delete_repo (a pin it does not match). */
const LISTED = spawnSync(process.execPath, [recorder.args[0]!], { input: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n', encoding: 'utf8' }).stdout;
const PINS = Object.fromEntries((JSON.parse(LISTED).result.tools as Json[]).map((t) => [t.name, t.name === 'delete_repo' ? WRONG : toolPinHash(t)]));

describe('confirmation rules and a tool tool pinning withholds', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  const logLines: string[] = [];
  const audit = (name: string): Json[] => logLines.map((l) => JSON.parse(l) as Json).filter((l) => l.audit === true && l.msg === 'audit' && l.name === name);

  before(async () => {
    gw = await startGateway(
      {
        upstreams: [recorder],
        endpoints: [{ path: '/mcp', upstreams: ['fs'], prefix: 'always' }],
        pinning: { mode: 'withhold', pins: { fs: PINS } },
        tenants: [{ name: 'anonymous', endpoints: ['*'], confirm: [{ match: 'fs__*_repo' }, { match: 'fs__move_*' }] }],
      },
      { logLines },
    );
  });
  after(() => gw?.close());

  it('SDK v1: the withheld tool is refused SWB_TOOL_WITHHELD without a question; the audit names pinning', async () => {
    const client = new Client({ name: 'confirm-pinned', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(String(req.params.message));
      return { action: 'accept', content: { confirm: true } };
    });
    await client.connect(new StreamableHTTPClientTransport(gw.url('/mcp')));
    try {
      const err = await client.callTool({ name: 'fs__delete_repo', arguments: { repo: 'acme/site' } }).then(
        (r) => assert.fail(`answered: ${JSON.stringify(r)}`),
        (e: unknown) => e,
      );
      assert.ok(err instanceof McpError, String(err));
      assert.equal(err.code, -32602);
      assert.equal((err.data as Json)?.code, 'SWB_TOOL_WITHHELD');
      assert.equal((err.data as Json)?.rule, 'pinning.pins');
      assert.deepEqual(asked, [], 'the user is not asked about a call pinning refuses');
      await until('the refusal audited', () => audit('fs__delete_repo').length > 0);
      const [line] = audit('fs__delete_repo');
      assert.equal(line!.rule, 'pinning.pins');
      assert.equal(line!.confirmation, undefined);
      // A tool pinning lets through is still asked about, and runs once accepted.
      assert.match(textOf(await client.callTool({ name: 'fs__move_file', arguments: { source: 'a', destination: 'b' } })), /^move_file /);
      assert.equal(asked.length, 1);
      assert.match(asked[0]!, /fs__move_file/);
      const calls = textOf(await client.callTool({ name: 'fs__calls', arguments: {} }));
      assert.doesNotMatch(calls, /delete_repo/, 'nothing of the withheld call reached the upstream');
    } finally {
      await client.close();
    }
  });

  it('raw 2026-07-28: the first answer for the withheld tool is the refusal, not a confirmation round', async () => {
    const refused = await modernPost(gw.url('/mcp'), 'tools/call', { name: 'fs__delete_repo', arguments: { repo: 'acme/site' } });
    assert.equal(refused.body.error?.data?.code, 'SWB_TOOL_WITHHELD', JSON.stringify(refused.body));
    const shown = inputRound(await modernPost(gw.url('/mcp'), 'tools/call', { name: 'fs__move_file', arguments: { source: 'a', destination: 'b' } }));
    assert.equal(shown.key, 'confirm');
  });
});
