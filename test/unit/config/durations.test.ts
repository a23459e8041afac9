import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, parseConfig } from '../../../src/config/load.js';
import { hasProblem, MINIMAL_CONFIG } from '../../helpers/config-problems.js';

/** The problems of MINIMAL_CONFIG with `over` merged in (fails the test when it is accepted). */
function problems(over: Record<string, unknown>): string[] {
  try {
    parseConfig({ ...MINIMAL_CONFIG, ...over }, 'test', {});
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.problems;
  }
  assert.fail('accepted');
}

// Node's timers hold 2^31-1 ms at most: a longer one fires after 1 ms (with a TimeoutOverflowWarning).
// server.keepAliveMs: 2147483648 was accepted, and every SSE stream got a keep-alive comment each millisecond.
describe('durations past what a timer holds', () => {
  it('are refused where they are written, at any depth', () => {
    const list = problems({
      server: { keepAliveMs: 2 ** 31 },
      session: { idleTimeoutMs: 1e12 },
      upstreams: [{ ...MINIMAL_CONFIG.upstreams[0], requestTimeoutMs: 2 ** 31, healthCheck: { intervalMs: 2 ** 32 } }],
      modern: { continuationTtlMs: 2 ** 31 },
    });
    for (const path of ['server.keepAliveMs', 'session.idleTimeoutMs', 'upstreams[0].requestTimeoutMs', 'upstreams[0].healthCheck.intervalMs', 'modern.continuationTtlMs']) {
      hasProblem(list, path, 'at most 2147483647');
    }
  });

  it('are no concern of a JSON Schema or annotations, whose keys are data', () => {
    const big = { waitMs: 2 ** 31 };
    const arguments_ = [{ name: 'r', tools: ['*'], schema: { type: 'object', default: big } }];
    const tools = { overrides: { 'a__t': { annotations: big } } };
    parseConfig({ ...MINIMAL_CONFIG, tenants: [{ name: 'anonymous', endpoints: ['*'], arguments: arguments_ }], endpoints: [{ path: '/mcp', upstreams: ['a'], prefix: 'always', tools }] }, 'test', {});
  });

  it('up to the limit are accepted', () => {
    const cfg = parseConfig({ ...MINIMAL_CONFIG, server: { keepAliveMs: 2 ** 31 - 1 } }, 'test', {});
    assert.equal(cfg.server.keepAliveMs, 2 ** 31 - 1);
  });
});
