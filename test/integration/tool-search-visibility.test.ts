// What search mode lets a caller learn of tools it may not see, and what it leaves to others: a tool
// the tenant's policy denies neither appears in nor steers search_tools' answers (its words gave the
// ranking's feedback), and the first search or curated list of an endpoint makes tool pinning's first
// sighting the upstream's whole catalogue, not the part that caller asked about (the rest was withheld
// from everyone until approved). Found by a review, 2026-12-04.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient } from '../helpers/sdk.js';

const catalogue = (name: string, ...args: string[]) => ({ name, transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/catalogue-server.mjs', ...args], sandbox: 'none' as const });
const found = (r: any): string[] => (r.structuredContent.tools as Array<{ name: string }>).map((t) => t.name);

describe('search_tools and a denied tool', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      upstreams: [catalogue('gh', '--set', 'issues'), catalogue('fs', '--set', 'files')],
      endpoints: [
        // The tenant's policy denies gh__delete_repository here...
        { path: '/mcp', upstreams: ['gh', 'fs'], tools: { exposure: 'search' } },
        // ...and here curation leaves it out as well: the caller may see exactly the same tools on both.
        { path: '/ex', upstreams: ['gh', 'fs'], tools: { exposure: 'search', exclude: ['gh__delete_*'] } },
      ],
      tenants: [{ name: 'anonymous', endpoints: ['*'], tools: { allow: ['*'], deny: ['gh__delete_*'] } }],
    });
  });
  after(() => gw.close());

  it('answers a query only the denied tool matches exactly as if the tool did not exist', async () => {
    const denied = await connectClient(gw, 'streamable-http', { path: '/mcp' });
    const absent = await connectClient(gw, 'streamable-http', { path: '/ex' });
    try {
      for (const query of ['everything', 'erase it for good']) {
        const a = found(await denied.callTool({ name: 'search_tools', arguments: { query, limit: 50 } }));
        const b = found(await absent.callTool({ name: 'search_tools', arguments: { query, limit: 50 } }));
        assert.deepEqual(a, b, `"${query}": the same visible tools must give the same answer`);
      }
    } finally {
      await denied.close();
      await absent.close();
    }
  });
});

describe('search mode and tool pinning\'s first sighting', () => {
  const EVERY_TOOL = ['create_issue', 'delete_repository', 'get_issue_comments', 'list_pull_requests', 'merge_pull_request', 'searchCode'];

  /** A search endpoint /s (with `searchTools` curation) and a plain one /all over one catalogue, pins withheld; `first` is /s's first request. */
  async function firstSighting(searchTools: Record<string, unknown>, first: (s: Client) => Promise<void>): Promise<string[]> {
    const gw = await startGateway({
      upstreams: [catalogue('gh', '--set', 'issues')],
      endpoints: [
        { path: '/s', upstreams: ['gh'], tools: { exposure: 'search', ...searchTools } },
        { path: '/all', upstreams: ['gh'] },
      ],
      pinning: { mode: 'withhold' },
    });
    const s = await connectClient(gw, 'streamable-http', { path: '/s' });
    const all = await connectClient(gw, 'streamable-http', { path: '/all' });
    try {
      await first(s);
      return (await all.listTools()).tools.map((t) => t.name).sort();
    } finally {
      await s.close();
      await all.close();
      await gw.close();
    }
  }

  it('a first search_tools does not leave the rest of the catalogue pending approval', async () => {
    const names = await firstSighting({}, async (s) => {
      // The session's first request: a search (no tools/list before it).
      const r = (await s.callTool({ name: 'search_tools', arguments: { query: 'merge a pull request', limit: 1 } })) as any;
      assert.equal(r.structuredContent.tools.length, 1);
    });
    assert.deepEqual(names, EVERY_TOOL);
  });

  it('a first tools/list of a curated search endpoint does not leave the tools it leaves out pending approval', async () => {
    const names = await firstSighting({ exclude: ['merge_*'] }, async (s) => void (await s.listTools()));
    assert.deepEqual(names, EVERY_TOOL);
  });
});
