// Search mode, curation and names that fit, through real HTTP, real child processes (the catalogue
// fixture as three upstreams: a code host, a file server, a chat server) and the official SDK clients
// in both eras: SDK v1 over Streamable HTTP (a 2025 session) and SDK v2 pinned to 2026-07-28
// (stateless). The tenant may not see gh__delete_repository; nothing of it may show, and calling it
// through call_tool must answer exactly as a tool that does not exist.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';
import { connectClient, textOf } from '../helpers/sdk.js';
import { ISSUER, PUBLIC_URL, connectWithToken, makeKey, signToken, type TestKey } from '../helpers/tokens.js';
import { waitFor } from '../helpers/wait.js';

type Json = Record<string, any>;

export const catalogue = (name: string, ...args: string[]) => ({ name, transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/catalogue-server.mjs', ...args], sandbox: 'none' as const });
const UPSTREAMS = [catalogue('gh', '--set', 'issues', '--long'), catalogue('fs', '--set', 'files'), catalogue('chat', '--set', 'chat')];
const DENIED = 'gh__delete_repository';

/** Tool names in a search_tools result. */
function found(result: unknown): string[] {
  return ((result as Json).structuredContent.tools as Json[]).map((t) => t.name);
}

/** The JSON-RPC error a call got, with the called name replaced by NAME (to compare two answers). */
async function errorOf(run: () => Promise<unknown>, name: string): Promise<{ code: number; message: string }> {
  const err = await run().then(
    () => assert.fail('expected an error'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof McpError, String(err));
  return { code: err.code, message: err.message.replaceAll(name, 'NAME') };
}

function auditLines(lines: string[]): Json[] {
  return lines.map((l) => JSON.parse(l) as Json).filter((l) => l.audit === true && l.msg === 'audit');
}

function sample(text: string, name: string, labels: Record<string, string>): number {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

describe('tool search, curation and short names (gh + fs + chat on one endpoint)', () => {
  let gw: RunningGateway;
  const logLines: string[] = [];
  const clients: Array<{ close(): Promise<void> }> = [];
  const connect = async (path: string): Promise<Client> => {
    const c = await connectClient(gw, 'streamable-http', { path });
    clients.push(c);
    return c;
  };
  const connectModern = async (path: string) => {
    const c = new ModernClient({ name: 'modern-search-test', version: '1' }, { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } });
    clients.push(c);
    await c.connect(new ModernTransport(gw.url(path)));
    return c;
  };

  before(async () => {
    gw = await startGateway(
      {
        upstreams: UPSTREAMS,
        endpoints: [
          { path: '/mcp', upstreams: ['gh', 'fs', 'chat'], tools: { exposure: 'search' } },
          { path: '/ws', upstreams: ['gh', 'fs'], tools: { exposure: 'search+working-set' } },
          {
            path: '/all',
            upstreams: ['gh', 'fs'],
            tools: { exclude: ['gh__merge_*'], overrides: { fs__read_file: { name: 'read', description: 'Reads one file.' }, gh__create_issue: { title: 'New issue', annotations: { idempotentHint: false } } } },
          },
        ],
        tenants: [
          {
            name: 'anonymous',
            endpoints: ['*'],
            tools: { allow: ['*'], deny: ['gh__delete_*'] },
            arguments: [
              { name: 'short-titles', tools: ['gh__create_issue'], schema: { properties: { title: { type: 'string', maxLength: 20 } } } },
              { name: 'no-force', tools: ['fs__read_file', 'gh__create_pull_request_review_comment_*'], schema: { properties: { force: { const: false } } } },
            ],
          },
        ],
      },
      { logLines },
    );
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await gw.close();
  });

  describe('search mode', () => {
    it('lists only search_tools and call_tool, described from what the tenant may see', async () => {
      const { tools } = await (await connect('/mcp')).listTools();
      assert.deepEqual(tools.map((t) => t.name), ['search_tools', 'call_tool']);
      const description = tools[0]!.description!;
      // 8 issues-and-long tools less the denied one, 4 file tools, 2 chat tools.
      assert.match(description, /13 tools are available, from: chat \(2 tools: .*\); fs \(4 tools: .*\); gh \(7 tools: .*\)/);
      assert.doesNotMatch(description, /repository/, 'the denied tool is the only one named after repositories');
    });

    it('finds tools by task, and never a denied one, not even by its exact name', async () => {
      const c = await connect('/mcp');
      const comments = await c.callTool({ name: 'search_tools', arguments: { query: 'read the comments on an issue' } });
      assert.equal(found(comments)[0], 'gh__get_issue_comments');
      assert.deepEqual(JSON.parse(textOf(comments)).tools, (comments as Json).structuredContent.tools, 'the text a model reads carries the same matches');
      const hit = (comments as Json).structuredContent.tools[0];
      assert.deepEqual(Object.keys(hit).sort(), ['description', 'inputSchema', 'name']);
      for (const query of [DENIED, 'delete repository', 'delete_repository', 'deleteRepository']) {
        const r = await c.callTool({ name: 'search_tools', arguments: { query, limit: 50 } });
        assert.ok(!found(r).includes(DENIED), `"${query}" did not reveal the denied tool`);
        assert.doesNotMatch(textOf(r), /delete_repository/);
      }
      const onlyFs = await c.callTool({ name: 'search_tools', arguments: { query: 'list', upstream: 'fs' } });
      // "list" also finds, through its synonyms (show, read…), tools that do not say it: all from fs.
      assert.equal(found(onlyFs)[0], 'fs__list_directory');
      assert.ok(found(onlyFs).every((n) => n.startsWith('fs__')), found(onlyFs).join());
      assert.equal(found(await c.callTool({ name: 'search_tools', arguments: { query: 'file', limit: 1 } })).length, 1);
    });

    it('refuses bad search arguments with a clear -32602', async () => {
      const c = await connect('/mcp');
      await assert.rejects(c.callTool({ name: 'search_tools', arguments: {} }), /-32602.*search_tools needs "query"/);
      await assert.rejects(c.callTool({ name: 'search_tools', arguments: { query: 'x', limit: 0 } }), /"limit" must be an integer from 1 to 50/);
      await assert.rejects(c.callTool({ name: 'call_tool', arguments: { arguments: {} } }), /-32602.*call_tool needs "name"/);
    });

    it('call_tool runs the tool found; a denied or unknown name answers exactly as an unknown tool', async () => {
      const c = await connect('/mcp');
      const r = await c.callTool({ name: 'call_tool', arguments: { name: 'gh__get_issue_comments', arguments: { repo: 'a/b', issue_number: 7 } } });
      assert.equal(textOf(r), 'get_issue_comments {"repo":"a/b","issue_number":7}');
      const unknownDirect = await errorOf(() => c.callTool({ name: 'gh__no_such_tool', arguments: {} }), 'gh__no_such_tool');
      const unknownWrapped = await errorOf(() => c.callTool({ name: 'call_tool', arguments: { name: 'gh__no_such_tool', arguments: {} } }), 'gh__no_such_tool');
      const deniedWrapped = await errorOf(() => c.callTool({ name: 'call_tool', arguments: { name: DENIED, arguments: {} } }), DENIED);
      const deniedDirect = await errorOf(() => c.callTool({ name: DENIED, arguments: {} }), DENIED);
      assert.deepEqual(unknownDirect, { code: -32602, message: 'MCP error -32602: Tool NAME not found' });
      for (const e of [unknownWrapped, deniedWrapped, deniedDirect]) assert.deepEqual(e, unknownDirect);
      const meta = await errorOf(() => c.callTool({ name: 'call_tool', arguments: { name: 'call_tool', arguments: {} } }), 'call_tool');
      assert.deepEqual(meta, unknownDirect, 'call_tool does not call the meta-tools');
    });

    it('call_tool is the direct call in the audit log, the metrics and the argument rules', async () => {
      const c = await connect('/mcp');
      const metrics = async () => sample(await (await fetch(gw.app.metricsUrl!)).text(), 'switchboard_tool_calls_total', { tool: 'gh__create_issue', outcome: 'ok' });
      const before = await metrics();
      const from = logLines.length;
      const args = { repo: 'a/b', title: 'Short' };
      const direct = await c.callTool({ name: 'gh__create_issue', arguments: args });
      const wrapped = await c.callTool({ name: 'call_tool', arguments: { name: 'gh__create_issue', arguments: args } });
      assert.deepEqual(wrapped, direct);
      assert.equal(await metrics(), before + 2, 'both counted under the real tool');
      const lines = await waitFor(() => {
        const a = auditLines(logLines.slice(from)).filter((l) => l.name === 'gh__create_issue');
        return a.length === 2 ? a : undefined;
      });
      assert.ok(lines, 'two audit lines');
      const strip = ({ latencyMs: _l, time: _t, session: _s, ...rest }: Json) => rest;
      assert.deepEqual(strip(lines[1]!), strip(lines[0]!));
      assert.equal(lines[0]!.upstream, 'gh');
      assert.equal(lines[0]!.decision, 'allow');
      const tooLong = { repo: 'a/b', title: 'A title far longer than twenty characters' };
      const directRefusal = await errorOf(() => c.callTool({ name: 'gh__create_issue', arguments: tooLong }), 'gh__create_issue');
      const wrappedRefusal = await errorOf(() => c.callTool({ name: 'call_tool', arguments: { name: 'gh__create_issue', arguments: tooLong } }), 'gh__create_issue');
      assert.match(directRefusal.message, /short-titles/);
      assert.deepEqual(wrappedRefusal, directRefusal);
    });

    it('a search_tools without query and a call_tool without name are refused with one audit line each (found by a review)', async () => {
      const c = await connect('/mcp');
      for (const [name, rule] of [['search_tools', 'tools.search'], ['call_tool', 'tools.call']] as const) {
        const from = logLines.length;
        const err = await c.callTool({ name, arguments: {} }).then(
          () => assert.fail(`${name}: expected a refusal`),
          (e: unknown) => e as McpError,
        );
        assert.ok(err instanceof McpError && err.code === -32602, String(err));
        const lines = await waitFor(() => {
          const a = auditLines(logLines.slice(from));
          return a.length > 0 ? a : undefined;
        });
        assert.ok(lines, `${name}: no audit line`);
        assert.equal(lines.length, 1, JSON.stringify(lines));
        assert.deepEqual([lines[0]!.name, lines[0]!.rule, lines[0]!.decision, lines[0]!.outcome], [name, rule, 'allow', 'error']);
      }
    });

    it('a 2026-07-28 client (SDK v2) finds and calls a tool through the meta-tools; the denied one stays invisible', async () => {
      const c = await connectModern('/mcp');
      assert.equal(c.getProtocolEra(), 'modern');
      const { tools } = await c.listTools();
      assert.deepEqual(tools.map((t) => t.name), ['search_tools', 'call_tool']);
      const r = await c.callTool({ name: 'search_tools', arguments: { query: 'write a file' } });
      assert.equal(found(r)[0], 'fs__write_file');
      assert.ok(!found(await c.callTool({ name: 'search_tools', arguments: { query: DENIED, limit: 50 } })).includes(DENIED));
      const called = await c.callTool({ name: 'call_tool', arguments: { name: 'fs__write_file', arguments: { path: '/tmp/x', content: 'hi' } } });
      assert.equal(textOf(called), 'write_file {"path":"/tmp/x","content":"hi"}');
      const denied = await modernPost(gw.url('/mcp'), 'tools/call', { name: 'call_tool', arguments: { name: DENIED, arguments: {} } });
      const unknown = await modernPost(gw.url('/mcp'), 'tools/call', { name: 'call_tool', arguments: { name: 'gh__nope', arguments: {} } });
      assert.deepEqual({ ...denied.body.error, message: denied.body.error.message.replace(DENIED, 'NAME') }, { ...unknown.body.error, message: unknown.body.error.message.replace('gh__nope', 'NAME') });
    });

    it('search+working-set: a 2025 session lists what it found from then on, told with list_changed', async () => {
      const c = await connect('/ws');
      let changed = 0;
      c.setNotificationHandler(ToolListChangedNotificationSchema, async () => void changed++);
      assert.deepEqual((await c.listTools()).tools.map((t) => t.name), ['search_tools', 'call_tool']);
      const r = await c.callTool({ name: 'search_tools', arguments: { query: 'pull requests', limit: 2 } });
      await waitFor(() => changed === 1 || undefined);
      const names = (await c.listTools()).tools.map((t) => t.name);
      assert.deepEqual(names, ['search_tools', 'call_tool', ...found(r).sort()]);
      assert.match(textOf(await c.callTool({ name: found(r)[0]!, arguments: {} })), /pull/);
      await c.callTool({ name: 'search_tools', arguments: { query: 'pull requests', limit: 2 } });
      assert.equal(changed, 1, 'finding the same tools again changes nothing');
    });
  });

  describe('curated and shortened names (exposure all)', () => {
    it('lists the curated view with names that fit, and routes each to the upstream’s own name', async () => {
      const c = await connect('/all');
      const { tools } = await c.listTools();
      const names = tools.map((t) => t.name);
      assert.ok(names.includes('read') && !names.includes('fs__read_file'), 'renamed');
      assert.ok(!names.some((n) => n.startsWith('gh__merge_')), 'excluded');
      assert.ok(!names.includes(DENIED), 'policy still applies');
      assert.ok(names.every((n) => n.length <= 64), names.join());
      assert.equal(tools.find((t) => t.name === 'read')!.description, 'Reads one file.');
      const issue = tools.find((t) => t.name === 'gh__create_issue')!;
      assert.equal(issue.title, 'New issue');
      assert.deepEqual(issue.annotations, { idempotentHint: false });
      const short = names.filter((n) => n.length === 64);
      assert.equal(short.length, 2, 'the two long names are shortened');
      assert.ok(short.every((n) => n.startsWith('gh__create_pull_request_review_comment_')));
      assert.equal(textOf(await c.callTool({ name: 'read', arguments: { path: '/etc/hosts' } })), 'read_file {"path":"/etc/hosts"}');
      const replies = await Promise.all(short.map((n) => c.callTool({ name: n, arguments: { body: n } })));
      assert.deepEqual(replies.map(textOf).map((t) => t.split(' ')[0]).sort(), ['create_pull_request_review_comment_reply_in_thread_for_community', 'create_pull_request_review_comment_reply_in_thread_for_enterprise']);
    });

    it('a hidden canonical name (renamed, excluded, or too long) answers as an unknown tool, in both eras', async () => {
      const c = await connect('/all');
      const unknown = await errorOf(() => c.callTool({ name: 'gh__nope', arguments: {} }), 'gh__nope');
      for (const hidden of ['fs__read_file', 'gh__merge_pull_request', 'gh__create_pull_request_review_comment_reply_in_thread_for_enterprise']) {
        assert.deepEqual(await errorOf(() => c.callTool({ name: hidden, arguments: {} }), hidden), unknown, hidden);
        const modern = await modernPost(gw.url('/all'), 'tools/call', { name: hidden, arguments: {} });
        assert.equal(modern.body.error?.message, `Tool ${hidden} not found`);
      }
      const viaModern = await modernPost(gw.url('/all'), 'tools/call', { name: 'read', arguments: { path: '/x' } });
      assert.equal(viaModern.body.result.content[0].text, 'read_file {"path":"/x"}');
    });

    it('an argument rule refuses a renamed or shortened tool by the name it was called by; the audit line keeps the canonical name (found by a review)', async () => {
      const c = await connect('/all');
      const short = (await c.listTools()).tools.map((t) => t.name).find((n) => n.length === 64)!;
      const canonical = /fs__read_file|gh__create_pull_request_review_comment_reply_in_thread_for_(enterprise|community)/;
      for (const called of ['read', short]) {
        const err = await c.callTool({ name: called, arguments: { path: '/a', body: 'b', force: true } }).then(
          () => assert.fail(`${called}: expected a refusal`),
          (e: unknown) => e as McpError,
        );
        assert.ok(err instanceof McpError && err.code === -32602, String(err));
        assert.match(err.message, new RegExp(`Argument rule "no-force" refused tool "${called}"`));
        assert.equal((err.data as Json).tool, called);
        assert.doesNotMatch(`${err.message} ${JSON.stringify(err.data)}`, canonical, called);
      }
      const audited = auditLines(logLines).filter((l) => l.rule === 'arguments:no-force');
      assert.equal(audited.length, 2);
      assert.equal(audited[0]!.name, 'fs__read_file');
      assert.match(audited[1]!.name, canonical);
    });
  });
});

describe('call_tool and limits', () => {
  it('takes one of the tenant’s concurrent-request slots, as a direct call does', async () => {
    const gw = await startGateway({
      upstreams: [catalogue('hq', '--set', 'hold', '--set', 'files')],
      endpoints: [{ path: '/mcp', upstreams: ['hq'], tools: { exposure: 'search' } }],
      tenants: [{ name: 'anonymous', endpoints: ['*'], limits: { concurrentRequests: 1 } }],
    });
    const c = await connectClient(gw, 'streamable-http');
    try {
      // The one slot is held by a call in flight upstream until release is called.
      const held = c.callTool({ name: 'call_tool', arguments: { name: 'hold' } });
      const limited = async (run: () => Promise<unknown>) => (await run().then(() => 'passed', (e: Error) => e.message)) as string;
      await waitFor(async () => /maximum of 1 requests/.test(await limited(() => c.callTool({ name: 'read_file', arguments: { path: '/a' } }))) || undefined);
      const direct = await limited(() => c.callTool({ name: 'read_file', arguments: { path: '/a' } }));
      const wrapped = await limited(() => c.callTool({ name: 'call_tool', arguments: { name: 'read_file', arguments: { path: '/a' } } }));
      assert.match(direct, /tenant "anonymous" has its maximum of 1 requests in flight/);
      assert.equal(wrapped, direct);
      // search_tools is answered by the gateway from its index: it takes no slot (the request rate limit still counts it).
      assert.deepEqual(found(await c.callTool({ name: 'search_tools', arguments: { query: 'read a file' } }))[0], 'read_file');
      // A client's release would need a slot too: the test asks the upstream itself.
      await gw.app.gateway.pools.get('hq')!.commonInstance()!.request('tools/call', { name: 'release', arguments: {} }, {});
      assert.equal(textOf(await held), 'released');
      assert.equal(textOf(await c.callTool({ name: 'call_tool', arguments: { name: 'read_file', arguments: { path: '/a' } } })), 'read_file {"path":"/a"}');
    } finally {
      await c.close();
      await gw.close();
    }
  });
});

describe('curation per tenant', () => {
  it('a tenant with its own curation sees (and calls) its own view; another tenant does not', async () => {
    const key = await makeKey('curation-key', 'ES256');
    const gw = await startGateway({
      server: { publicUrl: PUBLIC_URL },
      auth: { mode: 'jwt', issuer: ISSUER, audience: [PUBLIC_URL], ...staticKey(key) },
      upstreams: [catalogue('gh', '--set', 'issues'), catalogue('fs', '--set', 'files')],
      endpoints: [{ path: '/mcp', upstreams: ['gh', 'fs'], tools: { exclude: ['gh__delete_*'], tenants: { alpha: { exclude: ['fs__*'], overrides: { gh__create_issue: { name: 'open_issue' } } } } } }],
      tenants: [
        { name: 'alpha', endpoints: ['*'] },
        { name: 'beta', endpoints: ['*'] },
      ],
    });
    const alpha = await connectWithToken(gw, 'streamable-http', await signToken(key, { tenant: 'alpha', sub: 'a' }));
    const beta = await connectWithToken(gw, 'streamable-http', await signToken(key, { tenant: 'beta', sub: 'b' }));
    try {
      const names = async (c: typeof alpha) => (await c.client.listTools()).tools.map((t) => t.name).sort();
      assert.deepEqual(await names(alpha), ['gh__get_issue_comments', 'gh__list_pull_requests', 'gh__merge_pull_request', 'gh__searchCode', 'open_issue']);
      assert.deepEqual(await names(beta), ['fs__list_directory', 'fs__move_file', 'fs__read_file', 'fs__write_file', 'gh__create_issue', 'gh__get_issue_comments', 'gh__list_pull_requests', 'gh__merge_pull_request', 'gh__searchCode']);
      assert.equal(textOf(await alpha.client.callTool({ name: 'open_issue', arguments: { repo: 'a/b', title: 't' } })), 'create_issue {"repo":"a/b","title":"t"}');
      await assert.rejects(alpha.client.callTool({ name: 'fs__read_file', arguments: {} }), /Tool fs__read_file not found/);
      await assert.rejects(beta.client.callTool({ name: 'open_issue', arguments: {} }), /Tool open_issue not found/);
      assert.match(textOf(await beta.client.callTool({ name: 'gh__create_issue', arguments: { title: 't' } })), /^create_issue /);
    } finally {
      await alpha.close();
      await beta.close();
      await gw.close();
    }
  });
});

/** The test key as a static verification key file (no JWKS server needed). */
function staticKey(key: TestKey): { keys: string[]; algorithms: Array<'ES256'> } {
  const dir = mkdtempSync(join(tmpdir(), 'swb-curation-'));
  const file = join(dir, 'key.jwk.json');
  writeFileSync(file, JSON.stringify(key.publicJwk));
  return { keys: [file], algorithms: [key.alg as 'ES256'] };
}
