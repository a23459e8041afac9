// search+working-set keeps the 64 tools a session's searches returned last: a tool found again is as new
// as the newest. A find of a tool already in the set changed nothing, so the set dropped the tool first
// found longest ago even when the search just before had returned it again: a session that kept
// finding (and using) one tool lost it from its list to tools it had found once and never again (found by
// a review).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startGateway } from '../helpers/gateway.js';
import { connectClient } from '../helpers/sdk.js';

const CATALOGUE = join(import.meta.dirname, '..', 'fixtures', 'catalogue-server.mjs');
const dir = mkdtempSync(join(tmpdir(), 'swb-working-set-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A word of its own for each tool (consonants only: the stemmer leaves it whole), so one search finds one tool. */
const C = 'bcdfghjklmnpqrtvwx';
const word = (i: number) => `zq${C[Math.floor(i / C.length)]}${C[i % C.length]}`;

describe('search+working-set (found by a review)', () => {
  it('a tool found again is kept over one found once, longer ago', async () => {
    const file = join(dir, 'tools.json');
    writeFileSync(file, JSON.stringify(Array.from({ length: 70 }, (_, i) => ({ name: `tool_${word(i)}`, description: `Does the ${word(i)} job.`, inputSchema: { type: 'object', properties: {} } }))));
    const gw = await startGateway({
      upstreams: [{ name: 'many', transport: 'stdio', command: process.execPath, args: [CATALOGUE, '--tools', file], sandbox: 'none' }],
      endpoints: [{ path: '/mcp', upstreams: ['many'], tools: { exposure: 'search+working-set' } }],
    });
    const client = await connectClient(gw, 'streamable-http');
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {});
    const search = async (i: number) => {
      const r = (await client.callTool({ name: 'search_tools', arguments: { query: word(i), limit: 1 } })) as unknown as { structuredContent: { tools: Array<{ name: string }> } };
      assert.deepEqual(r.structuredContent.tools.map((t) => t.name), [`tool_${word(i)}`]);
    };
    try {
      for (let i = 0; i < 64; i++) await search(i); // the set is full: tools 0 to 63
      await search(0); // tool 0 found again: now the newest
      await search(64); // one more: the one found longest ago (tool 1) makes room
      const listed = (await client.listTools()).tools.map((t) => t.name);
      assert.equal(listed.length, 2 + 64);
      assert.ok(listed.includes(`tool_${word(0)}`), 'the tool found again is still listed');
      assert.ok(listed.includes(`tool_${word(64)}`));
      assert.ok(!listed.includes(`tool_${word(1)}`), 'the tool found longest ago made room');
    } finally {
      await client.close();
      await gw.close();
    }
  });
});
