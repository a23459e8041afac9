// Encoded attribute pairs kept for the values that recur, given up for keys whose values do not.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PairCache } from '../../../src/observability/pair-cache.js';
import { ProtobufBytes } from '../../../src/observability/protobuf-bytes.js';

function written(out: ProtobufBytes, key: string, value: string): number {
  const start = out.pos;
  assert.ok(out.asciiPair(0x4a, key, value));
  return start;
}

describe('PairCache', () => {
  it('gives back the bytes remembered for a pair, a copy that later writes do not change', () => {
    const cache = new PairCache();
    const out = new ProtobufBytes(64);
    assert.equal(cache.find('mcp.method.name', 'tools/call'), undefined);
    const start = written(out, 'mcp.method.name', 'tools/call');
    const expected = Buffer.from(out.copy(start));
    cache.remember('mcp.method.name', 'tools/call', out, start);
    out.reset();
    for (let i = 0; i < 100; i++) written(out, 'other.key', 'x'.repeat(50));
    assert.deepEqual(Buffer.from(cache.find('mcp.method.name', 'tools/call')!), expected);
    assert.equal(cache.find('mcp.method.name', 'tools/list'), undefined);
  });

  it('gives a key up when its values do not recur, and keeps a key whose values do', () => {
    const cache = new PairCache();
    const out = new ProtobufBytes();
    let hits = 0;
    for (let i = 0; i < 1000; i++) {
      for (const [key, value] of [['jsonrpc.request.id', String(i)], ['network.transport', i % 2 ? 'tcp' : 'pipe']] as const) {
        if (cache.find(key, value)) {
          if (key === 'jsonrpc.request.id') assert.fail('a request id found');
          hits++;
          continue;
        }
        cache.remember(key, value, out, written(out, key, value));
      }
    }
    assert.equal(hits, 998);
    // Given up: even a value remembered now is not kept.
    cache.remember('jsonrpc.request.id', 'again', out, written(out, 'jsonrpc.request.id', 'again'));
    assert.equal(cache.find('jsonrpc.request.id', 'again'), undefined);
  });

  it('keeps at most 256 values per key, beginning anew when full', () => {
    const cache = new PairCache();
    const out = new ProtobufBytes();
    // Each value four times in a row: found three times in four, so the key is kept.
    for (let i = 0; i < 300; i++) {
      for (let again = 0; again < 4; again++) {
        const value = `v${i}`;
        if (!cache.find('k', value)) cache.remember('k', value, out, written(out, 'k', value));
      }
    }
    const kept = Array.from({ length: 300 }, (_, i) => cache.find('k', `v${i}`)).filter(Boolean).length;
    assert.ok(kept > 0 && kept <= 256, `${kept} kept`);
  });
});
