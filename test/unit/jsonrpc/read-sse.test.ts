import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSse } from '../../../src/jsonrpc/read-sse.js';
import { SseParser, type SseMessage } from '../../../src/jsonrpc/sse-parser.js';

async function* chunksOf(parts: Array<string | Buffer>, fail?: Error): AsyncGenerator<string | Buffer> {
  for (const p of parts) yield p;
  if (fail) throw fail;
}

async function collect(body: AsyncIterable<unknown>, parser = new SseParser(1 << 20)): Promise<SseMessage[]> {
  const out: SseMessage[] = [];
  for await (const e of readSse(body, parser)) out.push(e);
  return out;
}

describe('readSse: the one loop every SSE reader uses', () => {
  it('yields each event once it is complete, from bytes split anywhere (inside a character too)', async () => {
    const bytes = Buffer.from('id: 0_1\ndata: {"t":"héllo €"}\n\n: keepalive\n\nevent: endpoint\ndata: /post?s=1\n\n');
    const parts = Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1));
    assert.deepEqual(await collect(chunksOf(parts)), [
      { event: 'message', data: '{"t":"héllo €"}', id: '0_1' },
      { event: 'endpoint', data: '/post?s=1', id: undefined },
    ]);
  });

  it('leaves lastEventId and the retry hint on the parser for a resumption, an id-only event included', async () => {
    const parser = new SseParser(1 << 20);
    await collect(chunksOf(['retry: 250\nid: 3_1\ndata: x\n\n', 'id: 3_2\n\n']), parser);
    assert.equal(parser.lastEventId, '3_2');
    assert.equal(parser.retryMs, 250);
  });

  it('ends with the error of a body that breaks, after the events that arrived whole', async () => {
    const seen: string[] = [];
    const broken = new Error('socket hang up');
    await assert.rejects(
      (async () => {
        for await (const e of readSse(chunksOf(['data: one\n\ndata: tw'], broken), new SseParser(1 << 20))) seen.push(e.data);
      })(),
      (err: unknown) => err === broken,
    );
    assert.deepEqual(seen, ['one']);
  });

  it('ends with an error when a line passes the limit, without waiting for its end', async () => {
    const endless = (async function* () {
      yield 'data: ';
      for (let i = 0; i < 1000; i++) yield 'x'.repeat(100);
      assert.fail('read past the limit');
    })();
    await assert.rejects(collect(endless, new SseParser(1000)), /exceeds 1000 bytes/);
  });
});
