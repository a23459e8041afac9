// A 2026-07-28 client's request to a 2025 upstream carries the client's capabilities in `_meta`, so an
// upstream that reads them asks only for what the client can answer. They were passed on as the client
// declared them, roots included, to a shared connection, where the gateway refuses every roots/list (roots
// are one client's workspace): an upstream that adapted to them asked, and was refused. They are now those
// the client declared that the gateway can relay on that connection, as a 2026-07-28 upstream is told.
// The journaling stdio fixture, shared and per-session.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { Journal, modernPost } from '../helpers/modern-http.js';

const CAPS_KEY = 'io.modelcontextprotocol/clientCapabilities';
const CALL = { name: 'test_simple_text', arguments: {} };
const DECLARED = { roots: {}, sampling: { tools: {} }, elicitation: { url: {} } };

for (const sharing of ['shared', 'per-session'] as const) {
  describe(`2026-07-28 client capabilities passed to a ${sharing} 2025 upstream`, () => {
    let gw: RunningGateway;
    const journal = new Journal();

    before(async () => {
      gw = await startGateway({
        upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, args: [...FIXTURE.args, '--journal', journal.file], sharing, pool: { size: 1 } }],
        endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
      });
    });
    after(() => gw.close());

    it(sharing === 'shared' ? 'leave out roots, which the gateway does not relay on a shared connection' : 'keep roots, which a per-session connection relays', async () => {
      const mark = journal.mark();
      const r = await modernPost(gw.url(), 'tools/call', CALL, { caps: DECLARED });
      assert.equal(r.body.result?.resultType, 'complete', JSON.stringify(r.body));
      const call = journal.since(mark).find((m) => m.method === 'tools/call');
      assert.ok(call, 'the call reached the upstream');
      const passed = call.params._meta?.[CAPS_KEY];
      // What the gateway relays is passed as the client declared it (its sampling.tools, its one elicitation mode).
      const expected = sharing === 'shared' ? { sampling: { tools: {} }, elicitation: { url: {} } } : DECLARED;
      assert.deepEqual(passed, expected);
    });
  });
}
