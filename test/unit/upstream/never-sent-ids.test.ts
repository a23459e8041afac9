// An upstream (or a proxy before it) that answers with numeric ids the gateway never sent: every call it
// answered so times out, and the README promises a warning for "an answer to an id it never sent". Only string
// (and null) ids were warned about: a server answering id+1, or a proxy renumbering ids, made calls time out
// with nothing in the log to say why. A late answer to an id that was sent (after its timeout or
// cancellation, the race the spec warns about) is still ignored quietly.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JsonRpcRequest } from '../../../src/jsonrpc/types.js';
import { createLogger } from '../../../src/observability/logger.js';
import { MemoryTransport } from '../../../src/transport/memory-pair.js';
import { UpstreamClient } from '../../../src/upstream/upstream-client.js';

const settle = () => new Promise<void>((r) => setImmediate(r));

describe('answers to numeric ids the gateway never sent (found by a review)', () => {
  it('are warned about; a late answer to an id it did send is not', async () => {
    const lines: Array<{ msg: string; id?: unknown }> = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
    const [gw, up] = MemoryTransport.pair();
    const asked: JsonRpcRequest[] = [];
    up.onmessage = (m) => {
      if ('method' in m && 'id' in m) asked.push(m as JsonRpcRequest);
    };
    const client = new UpstreamClient('u', gw, logger, { resolveCaller: () => undefined, onNotification: () => {} });
    try {
      const timedOut = client.request('tools/list', {}, { timeoutMs: 50, maxTimeoutMs: 50 }).catch((e: Error) => e);
      await settle();
      const sent = asked[0]!.id as number;
      assert.match(String(((await timedOut) as Error).message), /did not answer within 50 ms/);
      await up.send({ jsonrpc: '2.0', id: sent, result: {} }); // late: quietly ignored
      await up.send({ jsonrpc: '2.0', id: sent + 1000, result: {} }); // never sent
      await up.send({ jsonrpc: '2.0', id: 0, result: {} }); // never sent: ids start at 1
      await settle();
      const warned = lines.filter((l) => /answered an id the gateway never sent/.test(l.msg)).map((l) => l.id);
      assert.deepEqual(warned, [sent + 1000, 0]);
    } finally {
      await client.close();
      await up.close();
    }
  });
});
