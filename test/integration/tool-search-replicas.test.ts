// Tool search across replicas: two gateways sharing a real redis-server, each fronting its own
// processes of the same three catalogue upstreams. The index is built by each replica from its own
// upstreams' lists, with no per-session search state, so the same query ranks the same tools on both,
// shortened names are the same on both, and a 2025 session whose requests alternate between the
// replicas finds a tool on one and calls it on the other.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { rotatingFetch, type Replica } from '../helpers/replicas.js';
import { textOf } from '../helpers/sdk.js';

const catalogue = (name: string, ...args: string[]) => ({ name, transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/catalogue-server.mjs', ...args], sandbox: 'none' as const });
const QUERIES = ['comments on an issue', 'write a file', 'pull request', 'post a message to a channel', 'list', 'delete repository', 'reply to a review comment'];

describe('tool search on two replicas (Redis)', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  const replicas: RunningGateway[] = [];

  before(async () => {
    redis = await startRedis();
    for (let i = 0; i < 2; i++) {
      replicas.push(
        await startGateway({
          store: { redis: { url: redis.url, keyPrefix: 'searchrep:', heartbeatMs: 200, replicaTtlMs: 1000 } },
          upstreams: [catalogue('gh', '--set', 'issues', '--long'), catalogue('fs', '--set', 'files'), catalogue('chat', '--set', 'chat')],
          endpoints: [
            { path: '/mcp', upstreams: ['gh', 'fs', 'chat'], tools: { exposure: 'search' } },
            { path: '/all', upstreams: ['gh', 'fs', 'chat'] },
          ],
          tenants: [{ name: 'anonymous', endpoints: ['*'], tools: { allow: ['*'], deny: ['gh__delete_*'] } }],
        }),
      );
    }
  });
  after(async () => {
    for (const r of replicas) await r.close();
    await redis?.stop();
  });

  it('rank the same tools for the same query, and hide the same denied one', async () => {
    for (const query of QUERIES) {
      const [a, b] = await Promise.all(replicas.map((r) => modernPost(r.url('/mcp'), 'tools/call', { name: 'search_tools', arguments: { query, limit: 50 } })));
      assert.ok(a!.body.result?.structuredContent, JSON.stringify(a!.body));
      assert.deepEqual(b!.body.result.structuredContent, a!.body.result.structuredContent, query);
      assert.ok(!a!.body.result.structuredContent.tools.some((t: { name: string }) => t.name === 'gh__delete_repository'));
    }
    const [la, lb] = await Promise.all(replicas.map((r) => modernPost(r.url('/mcp'), 'tools/list', {})));
    assert.deepEqual(lb!.body.result.tools, la!.body.result.tools, 'the meta-tools are described the same');
  });

  it('shorten long names the same way on both', async () => {
    const [a, b] = await Promise.all(replicas.map((r) => modernPost(r.url('/all'), 'tools/list', {})));
    const names = (x: typeof a) => (x!.body.result.tools as Array<{ name: string }>).map((t) => t.name).sort();
    assert.deepEqual(names(b), names(a));
    const short = names(a).filter((n) => n.length === 64);
    assert.equal(short.length, 2);
    // Called on the replica that did not list it.
    const r = await modernPost(replicas[1]!.url('/all'), 'tools/call', { name: short[0], arguments: { body: 'x' } });
    assert.match(r.body.result.content[0].text, /^create_pull_request_review_comment_reply_in_thread_for_/);
  });

  it('a 2025 session alternating between the replicas finds a tool on one and calls it through the other', async () => {
    const fetch = rotatingFetch(() => replicas.map((r) => ({ base: r.base }) as Replica));
    const client = new Client({ name: 'rotating', version: '1' }, { capabilities: {} });
    await client.connect(new StreamableHTTPClientTransport(replicas[0]!.url('/mcp'), { fetch }));
    try {
      const found = await client.callTool({ name: 'search_tools', arguments: { query: 'read a file' } });
      const first = (found.structuredContent as { tools: Array<{ name: string }> }).tools[0]!.name;
      assert.equal(first, 'fs__read_file');
      const called = await client.callTool({ name: 'call_tool', arguments: { name: first, arguments: { path: '/a' } } });
      assert.equal(textOf(called), 'read_file {"path":"/a"}');
      const again = await client.callTool({ name: 'search_tools', arguments: { query: 'read a file' } });
      assert.deepEqual(again.structuredContent, found.structuredContent);
    } finally {
      await client.close();
    }
  });
});
