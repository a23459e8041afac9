// A start refused as overloaded (429 with Retry-After) restarts after its Retry-After. Before, the restart read the
// last start error recorded: when the next start failed otherwise, and the close of its link was heard before its
// failure was recorded (a legacy HTTP+SSE stream ending during initialize), the old Retry-After was waited again.
// Only the latest start's failure counts now: that restart waits the backoff alone.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { Agent } from 'undici';
import { parseConfig } from '../../../src/config/load.js';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import { createLogger } from '../../../src/observability/logger.js';
import { SseClientTransport } from '../../../src/upstream/sse-client.js';
import { UpstreamPool } from '../../../src/upstream/upstream-pool.js';
import { startFlakySseServer } from '../../helpers/flaky-sse-server.js';

const RETRY_AFTER_S = 2;

describe('the restart after a failed start waits for the latest failure alone', () => {
  it('a throttled start, then a start whose stream ends: the second restart waits the backoff, not the old Retry-After', async () => {
    const up = await startFlakySseServer({ throttled: 1, retryAfterS: RETRY_AFTER_S, endedAt: 2 });
    const logged: Array<Record<string, unknown>> = [];
    const logger = createLogger('debug', { write: (line: string) => void logged.push(JSON.parse(line)) });
    const upstreamCfg = { name: 'u', transport: 'sse', url: up.url, healthCheck: { intervalMs: 0 }, restart: { initialDelayMs: 50, maxDelayMs: 100 } };
    const cfg = parseConfig({ upstreams: [upstreamCfg], endpoints: [{ path: '/mcp', upstreams: ['u'] }] }, 'test', {});
    const agent = new Agent();
    const pool = new UpstreamPool(cfg.upstreams[0]!, logger, (u, log) => new SseClientTransport(u as RemoteUpstreamConfig, agent, undefined, log));
    const ready = once(pool, 'ready');
    try {
      await pool.start();
      await ready;
      assert.equal(up.gets(), 3);
      const restarts = logged.filter((l) => l.msg === 'upstream throttled its start; restarting after its Retry-After' || l.msg === 'upstream down; restarting after backoff');
      assert.equal(restarts.length, 2, JSON.stringify(restarts));
      assert.equal(restarts[0]!.retryAfterMs, RETRY_AFTER_S * 1000);
      assert.equal(restarts[1]!.msg, 'upstream down; restarting after backoff', JSON.stringify(restarts[1]));
      assert.equal(restarts[1]!.retryAfterMs, undefined);
      assert.ok(Number(restarts[1]!.delayMs) <= 100, JSON.stringify(restarts[1]));
    } finally {
      await pool.close();
      await agent.close();
      up.close();
    }
  });
});
