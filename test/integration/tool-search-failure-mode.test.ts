// failureMode: closed promises that a list never silently misses a down upstream's part: it fails instead.
// A search-mode endpoint's tools/list (the meta-tools, described from the catalogue) and its search_tools
// left the down upstream out in either mode: a model told "no tool matches" concluded the tool did not
// exist, where the operator had asked for an error. So did one whose every upstream was down, in either
// mode ("no tools are available to you here"), where exposure all fails its list. Found by a review.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gatewayWithClients } from '../helpers/gateway-clients.js';

const fs = { name: 'fs', transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/catalogue-server.mjs', '--set', 'files'], sandbox: 'none' as const };
// Nothing listens on port 9 (discard): the upstream stays unreachable.
const down = { name: 'gh', transport: 'streamable-http' as const, url: 'http://127.0.0.1:9/mcp', sharing: 'shared' as const, era: 'legacy' as const, healthCheck: { intervalMs: 0 } };

const FAILED = '-32000 gh';

/** How a request failed: its code and the upstream its message names. */
function failure(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => 'answered',
    (e: { code?: number; message: string }) => `${e.code} ${/upstream "([a-z]+)"/.exec(e.message)?.[1]}`,
  );
}

describe('a search-mode endpoint with a down upstream', { timeout: 60_000 }, () => {
  const rig = gatewayWithClients({
    upstreams: [fs, down],
    endpoints: [
      { path: '/closed', upstreams: ['fs', 'gh'], failureMode: 'closed', tools: { exposure: 'search' } },
      { path: '/open', upstreams: ['fs', 'gh'], tools: { exposure: 'search' } },
      { path: '/closed-all', upstreams: ['fs', 'gh'], failureMode: 'closed' },
      { path: '/only', upstreams: ['gh'], tools: { exposure: 'search' } },
      { path: '/only-all', upstreams: ['gh'] },
    ],
  });
  /** The client on that endpoint (one each, connected before the tests). */
  const connect = async (path: string) => rig.clients[path]!;

  it('failureMode closed: tools/list and search_tools fail, as an aggregated list does', async () => {
    const all = await connect('/closed-all');
    // The wording follows the upstream's state (unreachable, then backing off): the code and the upstream named are what hold.
    assert.equal(await failure(all.listTools()), FAILED, 'exposure all fails its list');
    const c = await connect('/closed');
    assert.equal(await failure(c.listTools()), FAILED);
    assert.equal(await failure(c.callTool({ name: 'search_tools', arguments: { query: 'read a file' } })), FAILED);
  });

  it('failureMode open: the down upstream is left out', async () => {
    const c = await connect('/open');
    const { tools } = await c.listTools();
    assert.match(tools[0]!.description!, /from: fs \(4 tools/);
    const r = (await c.callTool({ name: 'search_tools', arguments: { query: 'read a file' } })) as unknown as { structuredContent: { tools: Array<{ name: string }> } };
    assert.equal(r.structuredContent.tools[0]?.name, 'fs__read_file');
  });

  it('failureMode open, every upstream down: tools/list and search_tools fail as a list does, not "no tools here"', async () => {
    assert.equal(await failure((await connect('/only-all')).listTools()), FAILED, 'exposure all fails its list');
    const c = await connect('/only');
    assert.equal(await failure(c.listTools()), FAILED);
    assert.equal(await failure(c.callTool({ name: 'search_tools', arguments: { query: 'read a file' } })), FAILED);
  });
});
