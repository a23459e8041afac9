// completion/complete on a prompt (ref/prompt) looked the name up in the cached prompt list alone, where
// prompts/get lists the upstream afresh first for a name the cache does not know: a prompt an upstream added
// without prompts/list_changed could be got, and was "not found" to completion until the next listing.
// Found by a review.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient, textOf } from '../helpers/sdk.js';

describe('completion on a prompt the upstream added without saying so', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      upstreams: [{ name: 'notes', transport: 'stdio', command: process.execPath, args: ['test/fixtures/notes-server.mjs'], sandbox: 'none', sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['notes'] }],
    });
  });
  after(() => gw.close());

  it('lists the upstream afresh, as prompts/get does, and completes it', async () => {
    const client = await connectClient(gw, 'streamable-http');
    try {
      assert.deepEqual((await client.listPrompts()).prompts, [], 'the cache holds no prompt');
      await client.callTool({ name: 'add_prompt', arguments: { name: 'draft' } });
      const values = await client.complete({ ref: { type: 'ref/prompt', name: 'draft' }, argument: { name: 'topic', value: 'x' } }).then((r) => r.completion.values);
      assert.deepEqual(values, ['draft:x']);
      assert.equal(textOf({ content: (await client.getPrompt({ name: 'draft' })).messages.map((m) => m.content) }), 'prompt draft');
    } finally {
      await client.close();
    }
  });
});
