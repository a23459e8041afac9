// A confirmation (tenants[].confirm) still waiting for the user when a reload takes the tool away: the
// tenant's allow rule dropped (a deny added), or the endpoint's curation excluding it. The user's accept
// that comes after the reload must not send the call: it is refused as the call would be refused now
// (an unknown tool), in the 2025 session era (SDK v1, Streamable HTTP) and in the 2026-07-28 era (a
// raw input_required round and its retry). Before the fix the decision taken before the question held,
// and the upstream received a call the config in force no longer allowed. The recording stdio server's
// own record of calls is the proof.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { fileGateway, type FileGateway } from '../helpers/file-gateway.js';
import { inputRound, modernPost } from '../helpers/modern-http.js';
import { textOf } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

type Json = Record<string, any>;

const ARGS = { repo: 'acme/site' };
const CALL = { name: 'fs__delete_repo', arguments: ARGS };
const ACCEPT = { action: 'accept', content: { confirm: true } };

/** The config: `change` takes fs__delete_repo away (a tenant deny, or the endpoint's curation), or nothing. */
function doc(change?: 'deny' | 'exclude'): Record<string, unknown> {
  return {
    server: { host: '127.0.0.1', port: 0 },
    metrics: { enabled: false },
    logging: { level: process.env.LOG_LEVEL ?? 'silent' },
    pinning: { mode: 'off' },
    upstreams: [{ name: 'fs', transport: 'stdio', command: process.execPath, args: ['test/fixtures/recording-server.mjs'], sandbox: 'none', sharing: 'shared' }],
    endpoints: [
      { path: '/mcp', upstreams: ['fs'], prefix: 'always', ...(change === 'exclude' ? { tools: { exclude: ['fs__delete_*'] } } : {}) },
      { path: '/watch', upstreams: ['fs'], prefix: 'always' },
    ],
    tenants: [
      {
        name: 'anonymous',
        endpoints: ['*'],
        ...(change === 'deny' ? { tools: { deny: ['fs__delete_*'] } } : {}),
        confirm: [{ match: 'fs__delete_*', message: 'Deleting a repository cannot be undone.', timeoutMs: 20_000 }],
      },
    ],
  };
}

describe('reload: a confirmation pending when the tool is taken away sends nothing', { timeout: 120_000 }, () => {
  let fg: FileGateway;
  let watcher: Client;
  const clients: Client[] = [];
  const logLines: string[] = [];
  const audit = (): Json[] => logLines.map((l) => JSON.parse(l) as Json).filter((l) => l.audit === true && l.msg === 'audit' && l.name === 'fs__delete_repo');

  const upstreamCalls = async (): Promise<Json[]> => (JSON.parse(textOf(await watcher.callTool({ name: 'fs__calls', arguments: {} }))) as Json[]).filter((c) => c.name === 'delete_repo');
  const reloadTo = async (change?: 'deny' | 'exclude') => {
    fg.write(doc(change));
    const { report } = await fg.app.reload('test');
    assert.ok(report.result === 'applied' || (change === undefined && report.result === 'unchanged'), JSON.stringify(report));
  };

  before(async () => {
    fg = await fileGateway('swb-reload-confirm-', doc(), { logLines });
    watcher = new Client({ name: 'watcher', version: '1.0.0' }, { capabilities: {} });
    await watcher.connect(new StreamableHTTPClientTransport(fg.gw.url('/watch')));
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await watcher?.close().catch(() => {});
    await fg?.close();
  });

  for (const change of ['deny', 'exclude'] as const) {
    it(`2025 session: the user accepts after a reload (${change}): the call is refused as unknown, the upstream gets nothing`, async () => {
      await reloadTo(undefined);
      const client = new Client({ name: 'confirm-reload', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
      clients.push(client);
      let asked = 0;
      client.setRequestHandler(ElicitRequestSchema, async () => {
        asked++;
        await reloadTo(change); // while the user thinks
        return ACCEPT;
      });
      await client.connect(new StreamableHTTPClientTransport(fg.gw.url('/mcp')));
      const before = (await upstreamCalls()).length;
      const err = await client.callTool(CALL).then(
        (r) => assert.fail(`the call was answered: ${JSON.stringify(r)}`),
        (e: unknown) => e,
      );
      assert.equal(asked, 1);
      assert.ok(err instanceof McpError, String(err));
      assert.equal(err.code, -32602, err.message);
      assert.match(err.message, /fs__delete_repo/);
      assert.equal((await upstreamCalls()).length, before, 'nothing reached the upstream');
      // Audited as the refusal it is, with what the user answered.
      if (change === 'deny') await until('the refusal audited', () => audit().some((l) => l.decision === 'deny' && l.rule === 'tools.deny:fs__delete_*' && l.confirmation === 'accepted'));
    });

    it(`2026-07-28: the retry accepts after a reload (${change}): the call is refused as unknown, the upstream gets nothing`, async () => {
      await reloadTo(undefined);
      const round = inputRound(await modernPost(fg.gw.url('/mcp'), 'tools/call', CALL));
      assert.equal(round.key, 'confirm');
      await reloadTo(change);
      const before = (await upstreamCalls()).length;
      const done = await modernPost(fg.gw.url('/mcp'), 'tools/call', { ...CALL, inputResponses: { confirm: ACCEPT }, requestState: round.state });
      assert.equal(done.body.error?.code, -32602, JSON.stringify(done.body));
      assert.equal((await upstreamCalls()).length, before, 'nothing reached the upstream');
    });
  }
});
