/**
 * A collector slower than the gateway makes spans: the batch processor's queue fills and the spans
 * that find it full are dropped. The SDK says so only to its diagnostic logger, which the gateway does
 * not register (nothing global): the operator saw traces with holes and no word why (found by a review).
 */
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { loadTracing } from '../../../src/observability/load-tracing.js';
import { createLogger } from '../../../src/observability/logger.js';
import { waitFor } from '../../helpers/wait.js';

describe('a full export queue', () => {
  it('drops spans and says so in the log', async () => {
    // A collector that takes the exports and answers none until the end: the first batch stays in flight.
    const held: ServerResponse[] = [];
    let answering = false;
    const answer = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    const server = createServer((req, res) => {
      req.resume();
      if (answering) answer(res);
      else held.push(res);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
    const env = { OTEL_BSP_MAX_QUEUE_SIZE: '2', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '2', OTEL_BSP_SCHEDULE_DELAY: '600000', OTEL_BSP_EXPORT_TIMEOUT: '600000' };
    const tracing = await loadTracing({ enabled: true, endpoint: `http://127.0.0.1:${port}`, protocol: 'http/protobuf', sampleRatio: 1, headers: {}, recordPrincipal: false }, logger, env);
    try {
      // Two go out in the first batch (never answered), two fill the queue, the other six find it full.
      for (let i = 0; i < 10; i++) tracing.server('tools/call echo', undefined, {}).end();
      const dropped = () => lines.map((l) => JSON.parse(l)).find((l) => /dropped/.test(l.msg));
      await waitFor(() => dropped() !== undefined, { timeoutMs: 5000 }).catch(() => {});
      const line = dropped();
      assert.ok(line, `no line says spans were dropped: ${lines.join('')}`);
      assert.equal(line.level, 40);
      assert.ok(line.dropped >= 1, `${line.dropped}`);
    } finally {
      answering = true;
      held.forEach(answer);
      await tracing.shutdown().catch(() => {});
      server.close();
    }
  });
});
