// An aggregated list was asked of every upstream of the endpoint, also of one the tenant's policy lets it see
// nothing of: such an upstream's items were filtered out, but its name and its own cursor went into the
// gateway's cursor (base64 JSON, `{"c":{"hr":"2"}}`), and a cursor naming it was taken back and sent on to it.
// The caller learnt of an upstream its policy hides, as failAsList no longer tells it (found by a review).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient } from '../helpers/sdk.js';

const CATALOGUE = join(import.meta.dirname, '..', 'fixtures', 'catalogue-server.mjs');
const forged = (c: Record<string, string>) => Buffer.from(JSON.stringify({ m: 'tools/list', c })).toString('base64url');

describe('list cursors and upstreams the tenant sees nothing of (found by a review)', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let client: Client;
  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      upstreams: [
        { name: 'gh', transport: 'stdio', command: process.execPath, args: [CATALOGUE, '--set', 'issues', '--page-size', '4'], sandbox: 'none', sharing: 'shared' },
        { name: 'hr', transport: 'stdio', command: process.execPath, args: [CATALOGUE, '--set', 'files', '--page-size', '2'], sandbox: 'none', sharing: 'shared' },
      ],
      endpoints: [{ path: '/mcp', upstreams: ['gh', 'hr'] }],
      tenants: [{ name: 'anonymous', endpoints: ['*'], tools: { allow: ['gh__*'], deny: [] } }],
    });
    client = await connectClient(gw, 'streamable-http', { path: '/mcp' });
  });
  after(async () => {
    await client?.close();
    await gw?.close();
  });

  it('pages through the visible upstreams alone, and takes no cursor naming a hidden one', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const r = await client.listTools(cursor === undefined ? {} : { cursor });
      seen.push(...r.tools.map((t) => t.name));
      cursor = r.nextCursor;
      if (cursor === undefined) break;
      assert.doesNotMatch(Buffer.from(cursor, 'base64url').toString('utf8'), /"hr"/, `the cursor names upstream hr: ${Buffer.from(cursor, 'base64url').toString('utf8')}`);
    }
    assert.equal(cursor, undefined, 'the listing ends');
    assert.deepEqual(seen.sort(), ['gh__create_issue', 'gh__delete_repository', 'gh__get_issue_comments', 'gh__list_pull_requests', 'gh__merge_pull_request', 'gh__searchCode']);
    // A cursor naming hr is one naming an upstream the endpoint does not have: refused as malformed, never sent on.
    await assert.rejects(client.listTools({ cursor: forged({ hr: '0' }) }), /unknown or malformed cursor/);
    await assert.rejects(client.listTools({ cursor: forged({ nope: '0' }) }), /unknown or malformed cursor/);
  });
});
