// Tool pinning's verdicts over a pool of two instances of one upstream (src/router/pinned-call.ts): what
// one instance's listing withheld counts for calls through the other. Real instances, over memory pairs.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/load.js';
import type { JsonRpcRequest } from '../../../src/jsonrpc/types.js';
import { createLogger } from '../../../src/observability/logger.js';
import { admitListing, pinVerdict } from '../../../src/router/pinned-call.js';
import type { ToolGate } from '../../../src/router/tool-gate.js';
import { MemoryTransport } from '../../../src/transport/memory-pair.js';
import type { TransportFactory, UpstreamInstance } from '../../../src/upstream/upstream-instance.js';
import { UpstreamPool } from '../../../src/upstream/upstream-pool.js';
import { MAX_MARKS_PER_INSTANCE } from '../../../src/upstream/withheld-listings.js';

const logger = createLogger('silent');
type Definition = Readonly<Record<string, unknown>>;

/** Withholds what is not approved: every tool named run_*, and a definition whose version is not. */
const approved = new Set(['v1']);
const gate: ToolGate = {
  check: (_u, t) => (String(t.name).startsWith('run_') || (t.version !== undefined && !approved.has(String(t.version))) ? { message: `${String(t.name)} withheld`, details: { rule: 'pinning.changed' } } : undefined),
};

/** A server that answers initialize, and every other request with "method not found". */
const factory: TransportFactory = () => {
  const [gw, up] = MemoryTransport.pair();
  up.onmessage = (m) => {
    if (!('method' in m) || !('id' in m)) return;
    const req = m as JsonRpcRequest;
    void up.send(
      req.method === 'initialize'
        ? { jsonrpc: '2.0', id: req.id, result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'u', version: '1' } } }
        : { jsonrpc: '2.0', id: req.id, error: { code: -32601, message: 'Method not found' } },
    );
  };
  return gw;
};

const pools: UpstreamPool[] = [];
async function twoInstances(): Promise<{ pool: UpstreamPool; a: UpstreamInstance; b: UpstreamInstance }> {
  const cfg = parseConfig({ upstreams: [{ name: 'u', transport: 'stdio', command: 'never-run', pool: { size: 2 } }], endpoints: [{ path: '/mcp', upstreams: ['u'] }] }, 'test', {});
  const pool = new UpstreamPool(cfg.upstreams[0]!, logger, factory);
  pools.push(pool);
  await pool.start();
  const [a, b] = [...pool.instances];
  assert.ok(a && b && a !== b);
  return { pool, a, b };
}

const catalogue = (...tools: Definition[]) => new Map(tools.map((t) => [String(t.name), t]));
const verdict = async (pool: UpstreamPool, inst: UpstreamInstance, d: Definition) => pinVerdict(gate, pool, inst, catalogue(d), d);
const rule = (block: Awaited<ReturnType<typeof verdict>>) => block?.details.rule;

describe('pinned calls over a pool of instances', () => {
  after(() => Promise.all(pools.map((p) => p.close())));

  it('an instance withholding more tools than are kept track of has its marks let go, and calls elsewhere refused, until a complete listing of its withholds fewer', async () => {
    const { pool, a, b } = await twoInstances();
    const keep = { name: 'keep', version: 'v1' };
    // Pages of a listing (not the whole of it), each naming new tools: never cleared by a later page.
    for (let page = 0; page < 10; page++) {
      const tools = Array.from({ length: 1000 }, (_, i) => ({ name: `run_${page}_${i}` }));
      assert.deepEqual(await admitListing(gate, pool, a, { tools: [keep, ...tools] }, false), [keep]);
    }
    assert.ok(pool.withheld.size <= MAX_MARKS_PER_INSTANCE, `${pool.withheld.size} withheld listings kept`);
    // Which tools it withheld is not known any more: any may be one it changed.
    assert.equal(rule(await verdict(pool, b, keep)), 'pinning.limit');
    assert.equal(await verdict(pool, a, keep), undefined, 'an instance is judged by its own catalogue');

    assert.deepEqual(await admitListing(gate, pool, a, { tools: [keep, { name: 'run_x' }] }, true), [keep]);
    assert.equal(pool.withheld.size, 1);
    assert.equal(await verdict(pool, b, keep), undefined);
    assert.equal(pool.withheld.against('run_x', b).length, 1, 'what the complete listing withheld is marked');
  });
});

describe('a call that took its catalogue before a listing withheld a newer definition', () => {
  after(() => Promise.all(pools.map((p) => p.close())));

  it('is refused, and its older definition passing clears nothing: calls through another instance stay refused', async () => {
    const { pool, a, b } = await twoInstances();
    const v1 = { name: 'weather', version: 'v1' };
    const v2 = { name: 'weather', version: 'v2' };
    // A's list shows v2 (withheld; A's catalogue is forgotten), while a call through A already holds v1.
    assert.deepEqual(await admitListing(gate, pool, a, { tools: [v2] }, true), []);
    assert.equal(rule(await verdict(pool, a, v1)), 'pinning.changed', 'the call through A ran A\'s older catalogue');
    assert.equal(pool.withheld.against('weather', b).length, 1, 'A\'s mark was cleared by a definition other than the one marked');
    assert.equal(rule(await verdict(pool, b, v1)), 'pinning.changed', 'B (its catalogue from before the change) ran the tool');

    approved.add('v2'); // the change is approved: A's mark goes, through either instance
    try {
      assert.equal(await verdict(pool, b, v1), undefined);
      assert.equal(pool.withheld.size, 0);
    } finally {
      approved.delete('v2');
    }
  });
});
