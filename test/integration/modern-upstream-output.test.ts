// A 2026-07-28 upstream's tool whose output is not an object (any JSON Schema as outputSchema, any JSON value
// as structuredContent: allowed in its era) in front of 2025 clients, whose revision requires both to be
// objects: the official SDK 1.x refuses a whole tools/list with one such tool. Real gateway, the modern
// fixture (SDK v2, MODERN_FIXTURE_ARRAY_OUTPUT), the SDK 1.x client and a raw modern POST.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningGateway } from '../helpers/gateway.js';
import { startModernRig, type ModernRig } from '../helpers/modern-server.js';
import { modernPost } from '../helpers/modern-http.js';
import { connectClient, textOf } from '../helpers/sdk.js';

describe('a modern upstream tool with array output, for both eras of clients', () => {
  let rig: ModernRig;
  let gw: RunningGateway;
  before(async () => {
    rig = await startModernRig({ env: { MODERN_FIXTURE_ARRAY_OUTPUT: '1' } });
    gw = rig.gw;
  });
  after(() => rig.close());

  it('an SDK 1.x client lists every tool and calls it, shown the output as content', async () => {
    const client = await connectClient(gw, 'streamable-http');
    try {
      const { tools } = await client.listTools();
      const tool = tools.find((t) => t.name === 'test_array_output');
      assert.ok(tool, 'the tool is listed');
      assert.equal(tool.outputSchema, undefined, 'no outputSchema its revision cannot hold');
      assert.ok(tools.some((t) => t.name === 'test_simple_text'), 'and the others with it');
      const r = await client.callTool({ name: 'test_array_output', arguments: {} });
      assert.equal(r.structuredContent, undefined);
      assert.equal(textOf(r), '["north","south"]');
    } finally {
      await client.close();
    }
  });

  it('a 2026-07-28 client is shown the tool and its result as the upstream gave them', async () => {
    const list = await modernPost(gw.url(), 'tools/list', {}, { caps: {} });
    const tool = list.body.result.tools.find((t: { name: string }) => t.name === 'test_array_output');
    assert.equal(tool.outputSchema.type, 'array');
    const call = await modernPost(gw.url(), 'tools/call', { name: 'test_array_output', arguments: {} }, { caps: {} });
    assert.deepEqual(call.body.result.structuredContent, ['north', 'south']);
  });
});
