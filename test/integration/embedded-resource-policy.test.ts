// Resources embedded in tool results and prompt messages, past a tenant's resource rules (found on 2026-12-07).
// The rules judged resources/list, resources/read and the contents a read answers, but not a tool's or a
// prompt's answer: a tenant denied file:///secrets/* got file:///secrets/key.txt's text from any tool or prompt
// that embedded it (`{type: "resource"}`), and its name from one that linked it (`{type: "resource_link"}`), in
// both eras and through search mode's call_tool. Now such an item is left out, as a read leaves out the contents
// of a URI the tenant may not read; a prompt message with it. Real gateway, the embedding fixture (its tool
// `embed` and prompt `with_files` embed and link file:///docs/a.txt and file:///secrets/key.txt), the official SDK
// client over Streamable HTTP, and raw 2026-07-28 POSTs.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';
import { connectClient } from '../helpers/sdk.js';

const SHOWN = 'file:///docs/a.txt';

/** What a tool result's content holds, one line per item: its type and the URI it names. */
const items = (content: any[]): string[] => content.map((c) => `${c.type} ${c.resource?.uri ?? c.uri ?? c.text}`);
const TOOL_SHOWN = ['text files:', `resource ${SHOWN}`, `resource_link ${SHOWN}`];
/** The prompt's messages kept: the text, the allowed file's two, the closing text. */
const PROMPT_SHOWN = ['user text read these', `user resource ${SHOWN}`, `user resource_link ${SHOWN}`, 'assistant text done'];
const messages = (list: any[]): string[] => list.map((m) => `${m.role} ${items([m.content])[0]}`);

describe('resources embedded in tool results and prompt messages, for a tenant denied some URIs', () => {
  let gw: RunningGateway;
  let client: Client;
  let search: Client;
  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      tenants: [{ name: 'anonymous', endpoints: ['*'], resources: { allow: ['*'], deny: ['file:///secrets/*'] } }],
      upstreams: [{ name: 'e', transport: 'stdio', command: process.execPath, args: ['test/fixtures/embedding-server.mjs'], sandbox: 'none', sharing: 'shared', pool: { size: 1 } }],
      endpoints: [
        { path: '/mcp', upstreams: ['e'] },
        { path: '/search', upstreams: ['e'], tools: { exposure: 'search' } },
      ],
    });
    client = await connectClient(gw, 'streamable-http');
    search = await connectClient(gw, 'streamable-http', { path: '/search' });
  });
  after(async () => {
    await client?.close();
    await search?.close();
    await gw.close();
  });

  it('a 2025 tools/call: the denied file embedded and linked is left out, the allowed one kept', async () => {
    const r = await client.callTool({ name: 'embed', arguments: {} });
    assert.deepEqual(items(r.content as any[]), TOOL_SHOWN);
    assert.ok(!JSON.stringify(r).includes('secret'), JSON.stringify(r));
    const plain = await client.callTool({ name: 'plain', arguments: {} });
    assert.deepEqual(items(plain.content as any[]), ['text plain'], 'a result embedding nothing passes as it came');
  });

  it('a 2025 call_tool on a search-mode endpoint: the same', async () => {
    const r = await search.callTool({ name: 'call_tool', arguments: { name: 'embed', arguments: {} } });
    assert.deepEqual(items(r.content as any[]), TOOL_SHOWN);
    assert.ok(!JSON.stringify(r).includes('secret'), JSON.stringify(r));
  });

  it('a 2025 prompts/get: the messages embedding or linking the denied file are left out', async () => {
    const r = await client.getPrompt({ name: 'with_files' });
    assert.deepEqual(messages(r.messages), PROMPT_SHOWN);
    assert.ok(!JSON.stringify(r).includes('secret'), JSON.stringify(r));
  });

  it('2026-07-28 requests: tools/call, call_tool and prompts/get the same', async () => {
    const call = await modernPost(gw.url(), 'tools/call', { name: 'embed', arguments: {} }, { caps: {} });
    assert.deepEqual(items(call.body.result?.content ?? []), TOOL_SHOWN, JSON.stringify(call.body));
    const wrapped = await modernPost(gw.url('/search'), 'tools/call', { name: 'call_tool', arguments: { name: 'embed', arguments: {} } }, { caps: {} });
    assert.deepEqual(items(wrapped.body.result?.content ?? []), TOOL_SHOWN, JSON.stringify(wrapped.body));
    const prompt = await modernPost(gw.url(), 'prompts/get', { name: 'with_files' }, { caps: {} });
    assert.deepEqual(messages(prompt.body.result?.messages ?? []), PROMPT_SHOWN, JSON.stringify(prompt.body));
    for (const a of [call, wrapped, prompt]) assert.ok(!JSON.stringify(a.body).includes('secret'), JSON.stringify(a.body));
  });
});
