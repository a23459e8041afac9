// An upstream's instructions are passed on up to 16 KiB (UTF-8), cut on a character boundary and marked
// (see test/integration/instructions-cap.test.ts for a 2025 upstream end to end). Here: the bound itself,
// characters of every UTF-8 length at the cut, and a 2026-07-28 upstream's server/discover, whose
// instructions are read apart from initialize's. The client over an in-memory pair.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../../../src/observability/logger.js';
import { MemoryTransport } from '../../../src/transport/memory-pair.js';
import { INSTRUCTIONS_CUT, MAX_INSTRUCTIONS_BYTES, cappedInstructions } from '../../../src/upstream/instructions-cap.js';
import { UpstreamClient } from '../../../src/upstream/upstream-client.js';

const silent = createLogger('silent');

describe('instructions cap', () => {
  it('instructions of exactly the bound are kept whole; one byte more and they are cut and marked', () => {
    const exact = 'a'.repeat(MAX_INSTRUCTIONS_BYTES);
    assert.equal(cappedInstructions(exact, silent), exact);
    const over = cappedInstructions(exact + 'b', silent);
    assert.ok(over.endsWith(INSTRUCTIONS_CUT));
    assert.equal(Buffer.byteLength(over), MAX_INSTRUCTIONS_BYTES);
  });

  for (const [label, ch] of [['two-byte', 'é'], ['three-byte', '€'], ['four-byte (a surrogate pair)', '😀']] as const) {
    it(`${label} characters are never cut in half`, () => {
      for (const pad of [0, 1, 2, 3]) {
        const text = 'a'.repeat(pad) + ch.repeat(MAX_INSTRUCTIONS_BYTES);
        const cut = cappedInstructions(text, silent);
        const kept = cut.slice(0, -INSTRUCTIONS_CUT.length);
        assert.ok(text.startsWith(kept));
        assert.equal(Buffer.from(kept).toString(), kept, `pad ${pad}: a whole number of characters`);
        assert.ok(Buffer.byteLength(cut) <= MAX_INSTRUCTIONS_BYTES && Buffer.byteLength(cut) > MAX_INSTRUCTIONS_BYTES - 4);
      }
    });
  }

  it('a 2026-07-28 upstream: server/discover instructions are cut too, with one warning', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
    const [gw, up] = MemoryTransport.pair();
    up.onmessage = (m) => {
      if ('id' in m && 'method' in m && m.method === 'server/discover') void up.send({ jsonrpc: '2.0', id: m.id!, result: { supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, instructions: 'x'.repeat(100_000) } });
    };
    const client = new UpstreamClient('modern', gw, logger, { resolveCaller: () => undefined, onNotification: () => {} });
    const identity = await client.discover(5_000);
    assert.ok(identity.instructions?.endsWith(INSTRUCTIONS_CUT));
    assert.equal(Buffer.byteLength(identity.instructions!), MAX_INSTRUCTIONS_BYTES);
    assert.equal(lines.filter((l) => String(l.msg).startsWith('upstream instructions longer than')).length, 1);
  });
});
