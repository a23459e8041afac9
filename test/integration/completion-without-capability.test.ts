// An endpoint whose upstreams differ in completions: one offers them (server-everything), one does not (an
// SDK 1.x server whose prompt and template have no completer). The gateway advertises completions for the
// endpoint, so a client asks them of every prompt and template it sees, as it types an argument: for those of
// the upstream without them, the answer is an empty completion (none to offer), never a request that upstream
// did not declare. Sent on, it was refused -32601 (Method not found), an error for every keystroke.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { everythingUpstream, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';
import { connectClient } from '../helpers/sdk.js';

const PLAIN = { name: 'plain', transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/plain-prompt-server.mjs'], sandbox: 'none' as const, sharing: 'shared' as const };
const EMPTY = { completion: { values: [], hasMore: false } };

describe('completion/complete for an upstream that offers no completions', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({ pinning: { mode: 'off' }, upstreams: [everythingUpstream('ev', 'shared'), PLAIN], endpoints: [{ path: '/mcp', upstreams: ['ev', 'plain'] }] });
  });
  after(() => gw.close());

  it('a 2025 client: completions are advertised; a prompt or template of that upstream completes to nothing', async () => {
    const client = await connectClient(gw, 'streamable-http');
    try {
      assert.ok(client.getServerCapabilities()?.completions, 'the endpoint offers completions (server-everything has them)');
      await client.listResourceTemplates();
      const prompt = await client.complete({ ref: { type: 'ref/prompt', name: 'plain__greet' }, argument: { name: 'who', value: 'A' } });
      assert.deepEqual(prompt, EMPTY);
      const template = await client.complete({ ref: { type: 'ref/resource', uri: 'plain://notes/{id}' }, argument: { name: 'id', value: '1' } });
      assert.deepEqual(template, EMPTY);
    } finally {
      await client.close();
    }
  });

  it('a 2026-07-28 client: the same', async () => {
    const a = await modernPost(gw.url(), 'completion/complete', { ref: { type: 'ref/prompt', name: 'plain__greet' }, argument: { name: 'who', value: 'A' } });
    assert.equal(a.status, 200, JSON.stringify(a.body));
    assert.deepEqual(a.body.result?.completion, EMPTY.completion, JSON.stringify(a.body));
  });
});
