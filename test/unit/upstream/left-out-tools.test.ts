// A 2026-07-28 upstream's tools whose x-mcp-header annotations break the era's rules are left out of its
// tools/list, and each is warned about once, remembered by name. Remembered without bound, a hostile
// upstream naming new such tools on every list (a list_changed, and the next list) grew the gateway's
// memory, and its log by a warning per tool, for as long as the connection lasted.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JsonRpcRequest } from '../../../src/jsonrpc/types.js';
import { createLogger } from '../../../src/observability/logger.js';
import { MemoryTransport } from '../../../src/transport/memory-pair.js';
import { UpstreamClient } from '../../../src/upstream/upstream-client.js';

const LEFT_OUT = 'tool left out: its x-mcp-header annotations are invalid';

describe('tools left out for their x-mcp-header annotations (found by a review)', () => {
  it('are warned about once each, up to a bound: new names on every list do not grow the memory or the log without end', async () => {
    const entries: Array<{ msg: string }> = [];
    const logger = createLogger('info', { write: (line: string) => void entries.push(JSON.parse(line)) });
    const [gw, up] = MemoryTransport.pair();
    let list = 0;
    up.onmessage = (m) => {
      const req = m as JsonRpcRequest;
      if (req.id === undefined) return;
      if (req.method === 'server/discover') return void up.send({ jsonrpc: '2.0', id: req.id, result: { supportedVersions: ['2026-07-28'], capabilities: { tools: {} } } });
      // 1000 tools a list, each with a new name and an annotation on its schema's root (never allowed).
      const tools = Array.from({ length: 1000 }, (_, i) => ({ name: `t${list}_${i}`, inputSchema: { type: 'object', 'x-mcp-header': 'h' } }));
      list++;
      void up.send({ jsonrpc: '2.0', id: req.id, result: { resultType: 'complete', tools } });
    };
    const client = new UpstreamClient('hostile', gw, logger, { resolveCaller: () => undefined, onNotification: () => {} });
    try {
      await client.discover(5000);
      for (let i = 0; i < 5; i++) assert.deepEqual((await client.request('tools/list', undefined, { timeoutMs: 5000, maxTimeoutMs: 5000 })).tools, []);
      const warned = entries.filter((e) => e.msg === LEFT_OUT).length;
      assert.ok(warned > 0 && warned <= 1000, `${warned} warnings for 5000 tools left out`);
      // The first ones are still remembered: listed again, they are not warned about again.
      list = 0;
      await client.request('tools/list', undefined, { timeoutMs: 5000, maxTimeoutMs: 5000 });
      assert.equal(entries.filter((e) => e.msg === LEFT_OUT).length, warned);
    } finally {
      await gw.close();
    }
  });
});
