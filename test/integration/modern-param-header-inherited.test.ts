/**
 * An x-mcp-header parameter whose name every JavaScript object inherits (`constructor`, `toString`), left
 * out of a call: it has no header, for a client's POST to the gateway nor for the gateway's to the upstream.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningGateway } from '../helpers/gateway.js';
import { startModernRig, type ModernRig } from '../helpers/modern-server.js';
import { modernPost } from '../helpers/modern-http.js';
import { connectClient, textOf } from '../helpers/sdk.js';

describe('a call leaving out an annotated parameter named constructor', () => {
  let rig: ModernRig;
  let gw: RunningGateway;
  before(async () => {
    rig = await startModernRig({ env: { MODERN_FIXTURE_INHERITED_NAMES: '1' } });
    gw = rig.gw;
  });
  after(() => rig.close());

  it('reaches the upstream from an SDK 1.x client', async () => {
    const client = await connectClient(gw, 'streamable-http');
    try {
      await client.listTools();
      const r = await client.callTool({ name: 'test_x_mcp_header_inherited', arguments: { region: 'north' } });
      assert.equal(r.isError, undefined, JSON.stringify(r));
      assert.equal(textOf(r), 'constructor given: false; Mcp-Param-Maker: none');
    } finally {
      await client.close();
    }
  });

  it('is taken from a 2026-07-28 client that sends no header for it', async () => {
    await modernPost(gw.url(), 'tools/list', {});
    const r = await modernPost(gw.url(), 'tools/call', { name: 'test_x_mcp_header_inherited', arguments: { region: 'north' } }, { headers: { 'mcp-param-region': 'north' } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.result?.content?.[0]?.text, 'constructor given: false; Mcp-Param-Maker: none', JSON.stringify(r.body));
  });
});
