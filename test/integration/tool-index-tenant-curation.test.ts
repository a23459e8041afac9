// A search-mode endpoint builds its tool view and search index ahead of the first request: at start, at
// a reload that changes the endpoint, after a tools/list_changed. Only the endpoint's own curation was
// built there: a tenant's own layer (tools.tenants.<name>) was built by that tenant's first search, at
// start and again after every reload that changed the curation, on the request path. Every curation of
// the endpoint is now built with the catalogue, and a search afterwards builds nothing (found by a review).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { fileGateway, type FileGateway } from '../helpers/file-gateway.js';
import { connectClient } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const CATALOGUE = join(import.meta.dirname, '..', 'fixtures', 'catalogue-server.mjs');

function doc(exclude: string[]): Record<string, unknown> {
  return {
    server: { host: '127.0.0.1', port: 0 },
    metrics: { enabled: false },
    pinning: { mode: 'off' },
    tenants: [{ name: 'anonymous', endpoints: ['*'] }],
    upstreams: [{ name: 'fs', transport: 'stdio', command: process.execPath, args: [CATALOGUE, '--set', 'files'], sandbox: 'none' }],
    endpoints: [{ path: '/mcp', upstreams: ['fs'], tools: { exposure: 'search', tenants: { anonymous: { exclude } } } }],
  };
}

type Found = { structuredContent: { tools: Array<{ name: string }> } };

describe('search mode: a tenant’s curation is built with the catalogue, not by its first search (found by a review)', { timeout: 60_000 }, () => {
  const logLines: string[] = [];
  let fg: FileGateway;
  let client: Client | undefined;
  /** The curations ("" for the endpoint's own) a view was built for, in order. */
  const built = () => logLines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'tool catalogue view built').map((l) => (l.curation as string | undefined) ?? '');
  before(async () => {
    fg = await fileGateway('swb-tenant-index-', doc([]), { logLines });
  });
  after(async () => {
    await client?.close().catch(() => {});
    await fg.close();
  });

  it('at start: both views are built before any request', () => {
    assert.deepEqual(built().sort(), ['', 'anonymous']);
  });

  it('a reload that changes the tenant’s layer builds its view then, and the search after it builds none', async () => {
    client = await connectClient(fg.gw, 'streamable-http', { path: '/mcp' });
    const before = built().length;
    fg.write(doc(['move_file']));
    assert.equal((await fg.app.reload('test')).report.result, 'applied');
    await until('the endpoint’s own view rebuilt', () => built().length > before);
    assert.deepEqual(built().slice(before).sort(), ['', 'anonymous']);
    const r = (await client.callTool({ name: 'search_tools', arguments: { query: 'move a file', limit: 50 } })) as unknown as Found;
    assert.ok(!r.structuredContent.tools.some((t) => t.name === 'move_file'), 'the new layer is in force');
    assert.equal(built().length, before + 2, 'the search built nothing');
  });
});
