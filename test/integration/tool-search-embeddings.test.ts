// Hybrid tool search (tools.embeddings) through real HTTP: the gateway with three stdio upstreams (the
// catalogue fixture), an OpenAI-compatible embeddings endpoint on a loopback port (test/helpers/
// embeddings-server.ts: concept vectors, since no model can run here) and the official SDK clients. What
// is shown: a task worded with none of a tool's words is found through the provider; a denied tool stays
// invisible however close its vector; the catalogue is embedded once, not per search or session; a
// provider that fails, is slow or answers wrongly costs nothing but the semantic half (lexical answers,
// a log line, a metric).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startEmbeddingsServer, type EmbeddingsServer } from '../helpers/embeddings-server.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';
import { connectClient } from '../helpers/sdk.js';

type Json = Record<string, any>;

const catalogue = (name: string, ...args: string[]) => ({ name, transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/catalogue-server.mjs', ...args], sandbox: 'none' as const });

const found = (result: unknown): string[] => ((result as Json).structuredContent.tools as Json[]).map((t) => t.name);

async function metric(gw: RunningGateway, labels: string): Promise<number> {
  const text = await (await fetch(gw.app.metricsUrl!)).text();
  const line = text.split('\n').find((l) => l.startsWith('switchboard_tool_search_embeddings_total{') && l.includes(labels));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

describe('hybrid tool search with an embeddings provider', () => {
  let gw: RunningGateway;
  let provider: EmbeddingsServer;
  const logLines: string[] = [];
  const clients: Client[] = [];
  const search = async (query: string, limit = 5, path = '/mcp'): Promise<string[]> => {
    const c = await connectClient(gw, 'streamable-http', { path });
    clients.push(c);
    return found(await c.callTool({ name: 'search_tools', arguments: { query, limit } }));
  };

  before(async () => {
    provider = await startEmbeddingsServer();
    gw = await startGateway(
      {
        upstreams: [catalogue('gh', '--set', 'issues'), catalogue('fs', '--set', 'files'), catalogue('chat', '--set', 'chat')],
        endpoints: [
          // /e1-/e3: the same, each with its own provider state (a failure there backs off that endpoint's queries).
          ...['/mcp', '/e1', '/e2', '/e3'].map((path) => ({
            path,
            upstreams: ['gh', 'fs', 'chat'],
            // Generous where the provider is meant to answer (this process's own stalls must not time it out); /e2 is the slow case's (provider 3 s).
            tools: { exposure: 'search' as const, embeddings: { url: provider.url, model: 'concepts-1', headers: { authorization: 'Bearer provider-key' }, timeoutMs: path === '/e2' ? 1000 : 5000, batchSize: 4 } },
          })),
          { path: '/words', upstreams: ['gh', 'fs', 'chat'], tools: { exposure: 'search' } },
        ],
        tenants: [{ name: 'anonymous', endpoints: ['*'], tools: { allow: ['*'], deny: ['gh__delete_*'] } }],
      },
      { logLines },
    );
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await gw.close();
    await provider.close();
  });

  it('finds a tool that no word of the task names, which the lexical index alone does not', async () => {
    const query = 'jot this down';
    const words = await connectClient(gw, 'streamable-http', { path: '/words' });
    clients.push(words);
    assert.ok(!found(await words.callTool({ name: 'search_tools', arguments: { query } })).includes('fs__write_file'), 'words alone do not find it');
    assert.equal((await search(query))[0], 'fs__write_file');
    // A 2026-07-28 request (no session) gets the same fused ranking.
    const modern = await modernPost(gw.url('/mcp'), 'tools/call', { name: 'search_tools', arguments: { query } });
    assert.equal(found(modern.body.result)[0], 'fs__write_file');
    // What both rankings put first stays first.
    assert.equal((await search('list the entries of a folder'))[0], 'fs__list_directory');
  });

  it('sends the configured model and credentials, the catalogue in batches, and embeds each tool once', async () => {
    const catalogueRequests = provider.requests.filter((r) => r.inputs.length > 1 || r.inputs[0]!.includes('Parameters'));
    assert.ok(catalogueRequests.length >= 2, 'batchSize 4 splits the catalogue');
    assert.ok(catalogueRequests.every((r) => r.inputs.length <= 4));
    const embedded = catalogueRequests.flatMap((r) => r.inputs);
    // Each of the four endpoints keeps its own vectors: every tool text exactly once per endpoint.
    const times = new Map<string, number>();
    for (const t of embedded) times.set(t, (times.get(t) ?? 0) + 1);
    assert.deepEqual(new Set(times.values()), new Set([4]), 'no tool text twice on one endpoint');
    assert.ok(embedded.some((t) => t.startsWith('fs: write file. Create a file')), embedded[0]);
    assert.ok(provider.requests.every((r) => r.headers.authorization === 'Bearer provider-key' && r.model === 'concepts-1'));
    const before = provider.requests.length;
    await search('jot this down');
    await search('jot this down');
    await search('some words never searched');
    assert.equal(provider.requests.length, before + 1, 'a repeated query and the catalogue are not embedded again; a new query is');
    assert.equal(await metric(gw, 'purpose="catalogue",outcome="ok"'), catalogueRequests.length);
  });

  it('never returns a denied tool, however close its vector', async () => {
    for (const query of ['destroy the repo', 'nuke repository', 'wipe project']) {
      const names = await search(query, 50);
      assert.ok(!names.some((n) => n.startsWith('gh__delete')), `${query}: ${names.join()}`);
    }
  });

  it('answers from the words alone when the provider fails, is slow or answers wrongly, says so, and backs off', async () => {
    // Every endpoint's catalogue is embedded (at start, or by its first search) while the provider works.
    for (const path of ['/e1', '/e2', '/e3']) assert.equal((await search('jot this down', 5, path))[0], 'fs__write_file', path);
    const cases: Array<[EmbeddingsServer['behaviour'], string, string]> = [
      ['error', '/e1', 'outcome="http"'],
      ['slow', '/e2', 'outcome="timeout"'],
      ['short', '/e3', 'outcome="invalid"'],
    ];
    for (const [behaviour, path, outcome] of cases) {
      provider.behaviour = behaviour;
      const was = await metric(gw, `purpose="query",${outcome}`);
      assert.equal((await search(`post a message to a channel (${behaviour})`, 5, path))[0], 'chat__post_message', behaviour);
      assert.equal(await metric(gw, `purpose="query",${outcome}`), was + 1, behaviour);
    }
    provider.behaviour = 'ok';
    // Backing off: the next searches on /e1 do not ask the provider (for 10 s) and rank by words.
    const asked = provider.requests.length;
    assert.ok(!(await search('jot it down now', 5, '/e1')).includes('fs__write_file'));
    assert.equal(provider.requests.length, asked, 'no request while backing off');
    const warning = logLines.map((l) => JSON.parse(l) as Json).find((l) => String(l.msg).includes('embeddings provider failed'));
    assert.ok(warning, 'a warning names the failure');
    assert.equal(warning.url, provider.url);
    assert.ok(!JSON.stringify(warning).includes('provider-key'), 'the credential stays out of the log');
    // An endpoint whose queries did not fail still ranks by meaning.
    assert.equal((await search('jot it down somewhere'))[0], 'fs__write_file');
  });
});
