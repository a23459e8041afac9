// A tool whose execution.taskSupport is "required" can only be called as a task (2025-11-25: called
// otherwise, the server answers -32601), and the gateway declares no tasks capability, under which a
// client must never make a call a task: through the gateway it cannot be called at all. Listed,
// server-everything's simulate-research-query was shown to every client, in both eras, and each call of it
// failed ("requires task augmentation"); the official SDK 1.x client refused to call it itself.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { everythingUpstream, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';
import { connectClient } from '../helpers/sdk.js';

const TASK_ONLY = 'simulate-research-query';

describe('tools that must be called as tasks, behind a gateway that declares no tasks', () => {
  let gw: RunningGateway;
  const lines: string[] = [];
  before(async () => {
    gw = await startGateway({ pinning: { mode: 'off' }, upstreams: [everythingUpstream('ev', 'shared'), everythingUpstream('evs', 'per-session')], endpoints: [{ path: '/mcp', upstreams: ['ev'] }, { path: '/own', upstreams: ['evs'] }] }, { logLines: lines });
  });
  after(() => gw.close());

  it('are left out of a 2025 client\'s list, and a call of one is answered as an unknown tool\'s', async () => {
    const client = await connectClient(gw, 'streamable-http');
    try {
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === 'echo'), 'the others are listed');
      assert.ok(!tools.some((t) => t.name === TASK_ONLY), 'the task-only tool is not');
      await assert.rejects(client.callTool({ name: TASK_ONLY, arguments: { topic: 'x' } }), (err: { code?: number; message?: string }) => err.code === -32602 && /not found/.test(String(err.message)));
    } finally {
      await client.close();
    }
    assert.equal(lines.filter((l) => l.includes('tool left out') && l.includes(TASK_ONLY)).length, 1, 'one warning names it');
  });

  it('are warned about once per upstream, not once per process (per-session sharing: one a session)', async () => {
    for (let i = 0; i < 2; i++) {
      const client = await connectClient(gw, 'streamable-http', { path: '/own' });
      try {
        assert.ok(!(await client.listTools()).tools.some((t) => t.name === TASK_ONLY));
      } finally {
        await client.close();
      }
    }
    assert.equal(lines.filter((l) => l.includes('tool left out') && l.includes('"evs"')).length, 1);
  });

  it("are left out of a 2026-07-28 client's list too", async () => {
    const a = await modernPost(gw.url(), 'tools/list', {});
    assert.equal(a.status, 200, JSON.stringify(a.body));
    assert.ok(!a.body.result.tools.some((t: { name: string }) => t.name === TASK_ONLY));
  });
});
