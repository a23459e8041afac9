// The 2026-07-28 era removed notifications/roots/list_changed: a server asks for roots in an input round
// (roots/list) when it needs them, which the gateway puts to the client live, so nothing is kept upstream
// to refresh. A 2025 client's roots/list_changed was still sent on to a modern upstream as a 2025 message
// (found by a review), which such a server refuses. It is now not sent at all; a legacy upstream still gets it.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { JsonRpcMessage, JsonRpcRequest } from '../../../src/jsonrpc/types.js';
import { createLogger } from '../../../src/observability/logger.js';
import { MemoryTransport } from '../../../src/transport/memory-pair.js';
import { UpstreamClient } from '../../../src/upstream/upstream-client.js';

const settle = () => new Promise<void>((r) => setImmediate(r));
const opened: MemoryTransport[] = [];
afterEach(async () => {
  for (const t of opened.splice(0)) await t.close();
});

/** A client on a memory pair whose far end answers server/discover (modern) or initialize (legacy); what it got. */
function setup(era: 'modern' | 'legacy') {
  const [gw, up] = MemoryTransport.pair();
  opened.push(gw);
  const received: JsonRpcMessage[] = [];
  up.onmessage = (m) => {
    received.push(m);
    if (!('id' in m) || !('method' in m)) return;
    const req = m as JsonRpcRequest;
    const result = req.method === 'server/discover' ? { supportedVersions: ['2026-07-28'], capabilities: {} } : { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'x', version: '1' } };
    void up.send({ jsonrpc: '2.0', id: req.id, result });
  };
  const client = new UpstreamClient('u', gw, createLogger('silent'), { resolveCaller: () => undefined, onNotification: () => {} });
  return { client, received, connect: () => client.connect(5000, true, [era]) };
}

describe('notifications/roots/list_changed to an upstream, by its era', () => {
  it('a 2026-07-28 upstream is not sent it; a 2025 one is', async () => {
    for (const era of ['modern', 'legacy'] as const) {
      const { client, received, connect } = setup(era);
      await connect();
      await client.notify('notifications/roots/list_changed');
      await settle();
      const sent = received.filter((m) => 'method' in m && m.method === 'notifications/roots/list_changed');
      assert.equal(sent.length, era === 'modern' ? 0 : 1, era);
    }
  });
});
