// A search-mode (or curated) endpoint maps a called name to its upstream through the endpoint's tool view,
// which was built from every upstream's tool list: a call to one upstream's tool waited for every other
// upstream's listing too. One upstream whose tools/list hung (a server slow to list after a restart or a
// list_changed) held every call on the endpoint, to every other upstream, for its requestTimeoutMs (60 s
// by default), again after every failed listing. Here the code host's listing is held until the calls
// to the file server have answered: before the fix they never did (found by a review).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startGateway } from '../helpers/gateway.js';
import { connectClient, textOf } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const CATALOGUE = join(import.meta.dirname, '..', 'fixtures', 'catalogue-server.mjs');
const dir = mkdtempSync(join(tmpdir(), 'swb-slow-list-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe("one upstream's held tools/list (found by a review)", () => {
  it("calls to another upstream's tools answer without waiting for it, by canonical, renamed and wrapped name", { timeout: 60_000 }, async () => {
    const hold = join(dir, 'hold');
    const gw = await startGateway({
      upstreams: [
        { name: 'fs', transport: 'stdio', command: process.execPath, args: [CATALOGUE, '--set', 'files'], sandbox: 'none' },
        // Longer than the test: a listing it holds is never given up while the test runs.
        { name: 'gh', transport: 'stdio', command: process.execPath, args: [CATALOGUE, '--set', 'issues', '--hold-lists', hold], sandbox: 'none', requestTimeoutMs: 600_000 },
      ],
      endpoints: [{ path: '/mcp', upstreams: ['fs', 'gh'], tools: { exposure: 'search', overrides: { fs__write_file: { name: 'save' } } } }],
    });
    const client = await connectClient(gw, 'streamable-http');
    const gh = [...gw.app.gateway.pools.get('gh')!.instances][0]!;
    try {
      writeFileSync(hold, ''); // from here gh answers no listing
      gh.catalogues.forget('tools'); // as its tools/list_changed does: listed afresh by the next request that needs it
      const listing = gh.catalogues.get('tools');
      listing.catch(() => {});
      await until("gh's listing reaches it", () => gh.inflight === 1);
      const direct = await client.callTool({ name: 'fs__read_file', arguments: { path: '/a' } });
      assert.equal(textOf(direct), 'read_file {"path":"/a"}');
      const wrapped = await client.callTool({ name: 'call_tool', arguments: { name: 'fs__read_file', arguments: { path: '/b' } } });
      assert.equal(textOf(wrapped), 'read_file {"path":"/b"}');
      const renamed = await client.callTool({ name: 'save', arguments: { path: '/c', content: 'x' } });
      assert.equal(textOf(renamed), 'write_file {"path":"/c","content":"x"}');
      // Hidden names are still unknown while gh is out of the view.
      await assert.rejects(client.callTool({ name: 'fs__write_file', arguments: {} }), /Tool fs__write_file not found/);
      assert.equal(gh.inflight, 1, "gh's listing was still held");
      // The held listing is never answered: gh lists afresh, and its own tools are found once it answers.
      rmSync(hold);
      gh.catalogues.forget('tools');
      const issue = await client.callTool({ name: 'call_tool', arguments: { name: 'gh__create_issue', arguments: { title: 't' } } });
      assert.equal(textOf(issue), 'create_issue {"title":"t"}');
    } finally {
      rmSync(hold, { force: true });
      await client.close();
      await gw.close();
    }
  });
});
