/**
 * An x-mcp-header argument given as an object (the client writes arguments whole) whose own `toString`
 * is no function: String() of it throws. It must fail as the bad argument it is, at the gateway's check of
 * a 2026-07-28 client's headers and when the gateway mirrors it for the upstream, and count against no
 * circuit every other client shares.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningGateway } from '../helpers/gateway.js';
import { startModernRig, type ModernRig } from '../helpers/modern-server.js';
import { modernPost } from '../helpers/modern-http.js';
import { connectClient, textOf } from '../helpers/sdk.js';

const HOSTILE = { toString: 'north' };

describe('an x-mcp-header argument whose toString is not a function', () => {
  let rig: ModernRig;
  let gw: RunningGateway;
  before(async () => {
    rig = await startModernRig({ upstream: { circuitBreaker: { failureThreshold: 2, resetTimeoutMs: 600_000 } } });
    gw = rig.gw;
  });
  after(() => rig.close());

  it('fails the calls of an SDK 1.x client sending it, and opens no circuit for the others', async () => {
    const hostile = await connectClient(gw, 'streamable-http');
    const other = await connectClient(gw, 'streamable-http');
    try {
      const answers: string[] = [];
      for (let i = 0; i < 3; i++) {
        answers.push(await hostile.callTool({ name: 'test_x_mcp_header', arguments: { region: HOSTILE } }).then((v) => JSON.stringify(v), (e: Error) => e.message));
      }
      assert.ok(answers.every((a) => !/could not be reached|is failing/.test(a)), answers.join('\n'));
      const r = await other.callTool({ name: 'test_x_mcp_header', arguments: { region: 'north' } });
      assert.equal(textOf(r), 'Region: north');
    } finally {
      await hostile.close();
      await other.close();
    }
  });

  it('is refused to a 2026-07-28 client as a header mismatch, not an internal error', async () => {
    await modernPost(gw.url(), 'tools/list', {});
    const r = await modernPost(gw.url(), 'tools/call', { name: 'test_x_mcp_header', arguments: { region: HOSTILE } }, { headers: { 'mcp-param-region': 'north' } });
    assert.equal(r.body.error?.code, -32020, JSON.stringify(r.body));
    assert.equal(r.status, 400);
  });
});
