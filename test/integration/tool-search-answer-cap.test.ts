// search_tools answered with every match in full, however large: a few tools with huge input schemas (an
// upstream's generated API wrappers) made one answer hundreds of kilobytes, twice over (the JSON text and
// structuredContent), all of it read by the model. The answer's JSON text is now held to
// tools.maxSearchAnswerChars (default 65,536): the best matches in full while they fit, a match that does not
// fit without its input schema (marked), the rest left out, and a note that says so.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient } from '../helpers/sdk.js';

const CATALOGUE = join(import.meta.dirname, '..', 'fixtures', 'catalogue-server.mjs');
const dir = mkdtempSync(join(tmpdir(), 'swb-answer-cap-'));

/** An input schema of about 28,000 characters of JSON. */
const hugeSchema = (tag: string) => ({
  type: 'object',
  properties: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`${tag}_${i}`, { type: 'string', description: `${tag} `.repeat(150) }])),
});
const BIG = ['zqbb_report_alpha', 'zqbb_report_beta', 'zqbb_report_gamma'];
const TOOLS = [
  ...BIG.map((name) => ({ name, description: `Makes the zqbb report (${name.slice(12)}).`, inputSchema: hugeSchema(name.slice(12)) })),
  { name: 'zqbb_report_small', description: 'Makes the small zqbb report.', inputSchema: { type: 'object', properties: { day: { type: 'string' } } } },
];

type Answer = { content: Array<{ text: string }>; structuredContent: { tools: Array<Record<string, any>>; note?: string } };

describe('search_tools answers have a size cap (found by a review)', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  const clients: Client[] = [];
  const search = async (path: string, query: string) => {
    const c = await connectClient(gw, 'streamable-http', { path });
    clients.push(c);
    return (await c.callTool({ name: 'search_tools', arguments: { query, limit: 10 } })) as unknown as Answer;
  };
  before(async () => {
    writeFileSync(join(dir, 'tools.json'), JSON.stringify(TOOLS));
    const upstream = { name: 'zq', transport: 'stdio' as const, command: process.execPath, args: [CATALOGUE, '--set', 'files', '--tools', join(dir, 'tools.json')], sandbox: 'none' as const };
    const files = { name: 'fs', transport: 'stdio' as const, command: process.execPath, args: [CATALOGUE, '--set', 'files'], sandbox: 'none' as const };
    gw = await startGateway({
      upstreams: [upstream, files],
      endpoints: [
        { path: '/default', upstreams: ['zq'], tools: { exposure: 'search' } },
        { path: '/small', upstreams: ['zq'], tools: { exposure: 'search', maxSearchAnswerChars: 8192 } as Record<string, unknown> },
        { path: '/files', upstreams: ['fs'], tools: { exposure: 'search', maxSearchAnswerChars: 4096 } as Record<string, unknown> },
      ],
    });
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await gw.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('by default: at most 65,536 characters, what fits in full, the rest without schemas, and a note', async () => {
    const r = await search('/default', 'zqbb report');
    const text = r.content[0]!.text;
    assert.ok(text.length <= 65_536, `${text.length} characters`);
    assert.deepEqual(JSON.parse(text), r.structuredContent);
    const { tools, note } = r.structuredContent;
    assert.deepEqual(tools.map((t) => t.name).sort(), [...BIG, 'zqbb_report_small'].sort(), 'two big ones fit: every match is named');
    const trimmed = tools.filter((t) => t.inputSchema === undefined);
    assert.equal(trimmed.length, 1, 'one big match does not fit in full');
    assert.equal(trimmed[0]!.schemaOmitted, true);
    for (const t of tools.filter((t) => t.inputSchema !== undefined)) assert.deepEqual(t.inputSchema, TOOLS.find((d) => d.name === t.name)!.inputSchema, 'a tool in full is whole');
    assert.match(note ?? '', /65536 characters/);
  });

  it('configured smaller: each big match without its schema, the small one whole', async () => {
    const r = await search('/small', 'zqbb report');
    const text = r.content[0]!.text;
    assert.ok(text.length <= 8192, `${text.length} characters`);
    const byName = new Map(r.structuredContent.tools.map((t) => [t.name, t]));
    for (const name of BIG) assert.equal(byName.get(name)?.schemaOmitted, true, name);
    assert.deepEqual(byName.get('zqbb_report_small')?.inputSchema, TOOLS[3]!.inputSchema);
    assert.match(r.structuredContent.note ?? '', /8192 characters/);
  });

  it('an answer that fits is as before: no note, nothing marked', async () => {
    const r = await search('/small', 'move a file');
    assert.equal(r.structuredContent.note, undefined);
    assert.ok(r.structuredContent.tools.every((t) => t.inputSchema !== undefined && t.schemaOmitted === undefined));
  });

  it('search_tools names the cap only where an answer could reach it: every answer of a small catalogue fits', async () => {
    const described = async (path: string) => {
      const c = await connectClient(gw, 'streamable-http', { path });
      clients.push(c);
      const search = (await c.listTools()).tools.find((t) => t.name === 'search_tools')!;
      return `${search.description} ${JSON.stringify(search.inputSchema)}`;
    };
    // Before, every endpoint's description named it: some 57 tokens a model read for a cap it could never meet.
    assert.doesNotMatch(await described('/files'), /4096|characters|schemaOmitted/);
    const all = (await search('/files', 'file')).content[0]!.text;
    assert.ok(all.length <= 4096, `${all.length} characters`);
    // Where the 50 largest tools do not fit (as here, three of about 28,000 characters), it is named as before.
    assert.match(await described('/small'), /answer over 8192 characters omits input schemas/);
    assert.match(await described('/default'), /answer over 65536 characters omits input schemas/);
  });
});

describe("search_tools' cap sentence and tools the caller may not see", { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let client: Client | undefined;
  const own = mkdtempSync(join(tmpdir(), 'swb-answer-cap-denied-'));
  before(async () => {
    writeFileSync(join(own, 'tools.json'), JSON.stringify(TOOLS));
    const upstream = { name: 'zq', transport: 'stdio' as const, command: process.execPath, args: [CATALOGUE, '--set', 'files', '--tools', join(own, 'tools.json')], sandbox: 'none' as const };
    gw = await startGateway({
      upstreams: [upstream],
      endpoints: [{ path: '/mcp', upstreams: ['zq'], tools: { exposure: 'search', maxSearchAnswerChars: 8192 } as Record<string, unknown> }],
      tenants: [{ name: 'anonymous', endpoints: ['*'], tools: { allow: ['*'], deny: BIG.map((n) => `zq__${n}`) } }],
    });
  });
  after(async () => {
    await client?.close().catch(() => {});
    await gw?.close();
    rmSync(own, { recursive: true, force: true });
  });

  it('is left out where only denied tools could reach the cap: nothing denied is hinted at, not even its size', async () => {
    client = await connectClient(gw, 'streamable-http', { path: '/mcp' });
    const search = (await client.listTools()).tools.find((t) => t.name === 'search_tools')!;
    // Before, the whole view's largest tools decided it, those the caller may not see too.
    assert.doesNotMatch(`${search.description} ${JSON.stringify(search.inputSchema)}`, /8192|characters|schemaOmitted/);
    const found = (await client.callTool({ name: 'search_tools', arguments: { query: 'zqbb report', limit: 10 } })) as unknown as Answer;
    assert.deepEqual(found.structuredContent.tools.map((t) => t.name), ['zqbb_report_small']);
  });
});
