// A search-mode endpoint under failureMode closed failed its tools/list and search_tools when any of its
// upstreams could not list, also one whose every tool the caller's tenant is denied: the caller was told,
// by name, of an upstream it may not see ("upstream \"hr\" …"), and lost its search to an upstream it
// cannot use. The denied upstream's failure is now no part of its answers; a reachable one's still fails
// them, as failureMode closed asks. Found by a review.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gatewayWithClients } from '../helpers/gateway-clients.js';

const fs = { name: 'fs', transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/catalogue-server.mjs', '--set', 'files'], sandbox: 'none' as const };
/** Nothing listens on port 9 (discard): these upstreams stay unreachable. */
const downAt = (name: string) => ({ name, transport: 'streamable-http' as const, url: 'http://127.0.0.1:9/mcp', sharing: 'shared' as const, era: 'legacy' as const, healthCheck: { intervalMs: 0 } });

type Json = Record<string, any>;

/** What a request got: "ok", or its error's code and message. */
function outcome(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => 'ok',
    (e: { code?: number; message: string }) => `${e.code} ${e.message}`,
  );
}

describe('a search-mode endpoint (failureMode closed) with a down upstream the tenant is denied', { timeout: 60_000 }, () => {
  const rig = gatewayWithClients({
    upstreams: [fs, downAt('hr'), downAt('ops')],
    endpoints: [
      { path: '/denied-down', upstreams: ['fs', 'hr'], failureMode: 'closed', tools: { exposure: 'search' } },
      { path: '/both-down', upstreams: ['fs', 'hr', 'ops'], failureMode: 'closed', tools: { exposure: 'search' } },
      // Curation that leaves out every tool of the down upstream: what the caller is shown holds none of it either.
      { path: '/curated-out', upstreams: ['fs', 'ops'], failureMode: 'closed', tools: { exposure: 'search', exclude: ['ops__*'] } },
    ],
    tenants: [{ name: 'anonymous', endpoints: ['*'], tools: { allow: ['fs__*', 'ops__*'] } }],
  });
  /** The client on that endpoint (one each, connected before the tests). */
  const connect = async (path: string) => rig.clients[path]!;

  it('lists and searches what the tenant may see, and never names the denied upstream', async () => {
    const c = await connect('/denied-down');
    const listed = await outcome(c.listTools());
    assert.equal(listed, 'ok');
    const { tools } = await c.listTools();
    assert.match(tools[0]!.description!, /from: fs \(4 tools/);
    assert.doesNotMatch(JSON.stringify(tools), /hr/);
    const r = (await c.callTool({ name: 'search_tools', arguments: { query: 'read a file' } })) as Json;
    assert.equal(r.structuredContent.tools[0]?.name, 'fs__read_file');
  });

  it('the same where curation leaves out every tool of the down upstream', async () => {
    const c = await connect('/curated-out');
    assert.equal(await outcome(c.listTools()), 'ok');
    const { tools } = await c.listTools();
    assert.match(tools[0]!.description!, /from: fs \(4 tools/);
    assert.doesNotMatch(JSON.stringify(tools), /ops/);
    const r = (await c.callTool({ name: 'search_tools', arguments: { query: 'read a file' } })) as Json;
    assert.equal(r.structuredContent.tools[0]?.name, 'fs__read_file');
  });

  it('still fails both when an upstream the tenant may use is down, naming that one', async () => {
    const c = await connect('/both-down');
    const listed = await outcome(c.listTools());
    assert.match(listed, /^-32000 .*upstream "ops"/);
    const searched = await outcome(c.callTool({ name: 'search_tools', arguments: { query: 'read a file' } }));
    assert.match(searched, /^-32000 .*upstream "ops"/);
  });
});
