// Warnings that what an upstream sends causes are rate-bounded (BoundedWarnings: 10 a second, 100 at once),
// on the ground that each is a line of a few hundred bytes. Two quoted upstream-chosen text whole: the id of
// an answer to a request never sent, and the method of a request no session could be found for (twice: in
// `method` and in the message). A string of any length up to the largest message the gateway reads: a
// server writing 1 MB ids or methods made 1 to 2 MB log lines, up to 100 at once and 10 a second after.
// Found by a review.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../../../src/observability/logger.js';
import { MemoryTransport } from '../../../src/transport/memory-pair.js';
import { UpstreamClient } from '../../../src/upstream/upstream-client.js';

const settle = () => new Promise<void>((r) => setImmediate(r));
const LONG = 'x'.repeat(100_000);

describe('upstream-chosen text in warning lines', () => {
  it('an unknown answer id and an unattributed request method are cut', async () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
    const [gw, up] = MemoryTransport.pair();
    const client = new UpstreamClient('u', gw, logger, { resolveCaller: () => undefined, onNotification: () => {} });
    try {
      await up.send({ jsonrpc: '2.0', id: LONG, result: {} });
      await up.send({ jsonrpc: '2.0', id: 7, method: LONG, params: {} });
      await settle();
      const never = lines.find((l) => l.includes('answered an id the gateway never sent'));
      const refused = lines.find((l) => l.includes('from upstream'));
      assert.ok(never && refused, lines.join('\n').slice(0, 500));
      for (const line of [never, refused]) assert.ok(line.length < 2048, `a warning line of ${line.length} characters`);
      assert.equal((JSON.parse(never) as { id: string }).id, `${'x'.repeat(256)}…`);
      assert.equal((JSON.parse(refused) as { method: string }).method, `${'x'.repeat(256)}…`);
    } finally {
      await client.close();
      await up.close();
    }
  });
});
