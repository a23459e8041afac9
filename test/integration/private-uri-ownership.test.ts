// Who owns a resource URI, as one session's listing of an upstream of its own (per-session, per-tenant,
// per-user) tells it, is that session's alone. Learned for the whole endpoint, a client whose own notes
// server listed a URI another upstream serves (users://alice/profile) sent every other session's read of
// it to that session's own notes server, where it is "not found": one client re-listing now and then kept
// the shared upstream's resource away from every tenant. Found by a review.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient, mcpRefusal, textOf } from '../helpers/sdk.js';

const stdio = (name: string, fixture: string, sharing: 'shared' | 'per-session') => ({
  name,
  transport: 'stdio' as const,
  command: process.execPath,
  args: [`test/fixtures/${fixture}`],
  sandbox: 'none' as const,
  sharing,
  pool: sharing === 'shared' ? { size: 1 } : { size: 1, warm: 0, max: 4 },
});

describe('a URI listed by one session’s own instance of an upstream', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      upstreams: [stdio('fs', 'template-server.mjs', 'shared'), stdio('notes', 'notes-server.mjs', 'per-session')],
      endpoints: [{ path: '/mcp', upstreams: ['fs', 'notes'] }],
    });
  });
  after(() => gw.close());

  it("routes that session's reads to it, and no other session's", async () => {
    const a = await connectClient(gw, 'streamable-http', { name: 'a' });
    const b = await connectClient(gw, 'streamable-http', { name: 'b' });
    try {
      await a.callTool({ name: 'notes__add_note', arguments: { uri: 'users://alice/profile' } });
      // a's list names the URI twice: the shared fs's, then a's own notes' (listed last, it is a's).
      const listed = (await a.listResources()).resources.filter((r) => r.uri === 'users://alice/profile');
      assert.equal(listed.length, 2);
      const read = (c: typeof a) => c.readResource({ uri: 'users://alice/profile' }).then((r) => textOf({ content: r.contents }));
      assert.equal(await read(a), 'note users://alice/profile', "a's read goes to its own notes server, as its list says");
      assert.equal(await read(b), 'read', "b's read goes to the shared upstream that lists the URI, not to b's own notes server");
    } finally {
      await a.close();
      await b.close();
    }
  });

  // The same for templates: a's own notes server listing users://{name}/profile (as literal as the shared
  // fs's users://{userId}/profile, and listed after it) sent b's read of users://bob/profile to b's own notes.
  it("routes by a template it listed that session's reads and completions, and no other session's", async () => {
    const a = await connectClient(gw, 'streamable-http', { name: 'a' });
    const b = await connectClient(gw, 'streamable-http', { name: 'b' });
    try {
      await a.callTool({ name: 'notes__add_template', arguments: { uriTemplate: 'users://{name}/profile' } });
      const templates = (await a.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
      assert.ok(templates.includes('users://{name}/profile') && templates.includes('users://{userId}/profile'), templates.join(', '));
      const complete = (c: typeof a, uri: string) => c.complete({ ref: { type: 'ref/resource', uri }, argument: { name: 'name', value: 'x' } }).then((r) => r.completion.values);
      assert.deepEqual(await complete(a, 'users://{name}/profile'), ['users://{name}/profile:x'], "a's completion goes to its own notes server");
      const read = await b.readResource({ uri: 'users://bob/profile' }).then((r) => textOf({ content: r.contents }));
      assert.equal(read, 'read', "b's read goes to the shared upstream whose template matches, not to b's own notes server");
      assert.deepEqual(await complete(b, 'users://{userId}/profile'), ['users://{userId}/profile:x']);
      // b's own notes server lists no such template: a's template does not send b's completion there (it answers "no such ref").
      assert.doesNotMatch((await mcpRefusal(() => complete(b, 'users://{name}/profile'))).message, /no such ref/);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
