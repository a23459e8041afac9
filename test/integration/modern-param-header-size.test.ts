/**
 * A client's argument mirrored into an Mcp-Param-* header (2026-07-28 x-mcp-header) is the client's to
 * size. One too long for the upstream's HTTP server (Node's, 16 KiB of headers) is refused by it before
 * any MCP is read: that call fails, and must not count against the upstream's circuit, which every other
 * client and tenant shares.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningGateway } from '../helpers/gateway.js';
import { startModernRig, type ModernRig } from '../helpers/modern-server.js';
import { connectClient, textOf } from '../helpers/sdk.js';

describe('a client sending an x-mcp-header argument too long for a header', () => {
  let rig: ModernRig;
  let gw: RunningGateway;
  before(async () => {
    rig = await startModernRig({ upstream: { circuitBreaker: { failureThreshold: 2, resetTimeoutMs: 600_000 } } });
    gw = rig.gw;
  });
  after(() => rig.close());

  it('fails its own calls, and opens no circuit for the other clients', async () => {
    const hostile = await connectClient(gw, 'streamable-http');
    const other = await connectClient(gw, 'streamable-http');
    try {
      const messages: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await hostile.callTool({ name: 'test_x_mcp_header', arguments: { region: 'x'.repeat(64 * 1024) } }).then(
          (v) => JSON.stringify(v),
          (e: Error) => e.message,
        );
        messages.push(r);
      }
      assert.ok(messages.every((m) => /headers as too large \(HTTP 431\)/.test(m)), messages.join('\n'));
      const r = await other.callTool({ name: 'test_x_mcp_header', arguments: { region: 'north' } });
      assert.equal(r.isError, undefined, JSON.stringify(r));
      assert.equal(textOf(r), 'Region: north');
    } finally {
      await hostile.close();
      await other.close();
    }
  });
});
