// An instance that failed to start for want of its user's consent waits for the user (no timed restart). Before,
// #onExit read the last start error recorded: when the start the user's consent began failed otherwise, and the
// close of its link was heard before its failure was recorded (a legacy HTTP+SSE stream ending during initialize),
// the earlier consent error decided, and the instance waited for a consent already given: never restarted.
// Only the latest start's failure counts now: that start restarts after the backoff.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { Agent } from 'undici';
import { parseConfig } from '../../../src/config/load.js';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import { GatewayError } from '../../../src/errors.js';
import { createLogger } from '../../../src/observability/logger.js';
import type { BearerSource } from '../../../src/upstream/bearer-source.js';
import { SseClientTransport } from '../../../src/upstream/sse-client.js';
import { UpstreamInstance } from '../../../src/upstream/upstream-instance.js';
import { startFlakySseServer } from '../../helpers/flaky-sse-server.js';

describe('the restart after a start begun by the user’s consent', () => {
  it('a start awaiting consent, then a start whose stream ends: it restarts after the backoff, not waiting for consent again', { timeout: 20_000 }, async () => {
    const up = await startFlakySseServer({ endedAt: 1 });
    const cfg = parseConfig({ upstreams: [{ name: 'u', transport: 'sse', url: up.url, healthCheck: { intervalMs: 0 }, restart: { initialDelayMs: 10, maxDelayMs: 20 } }], endpoints: [{ path: '/mcp', upstreams: ['u'] }] }, 'test', {});
    // The credential is the test's (a user-oauth upstream's would read the vault); the instance's logic is the same.
    let consented = false;
    const credentials: BearerSource = {
      token: async () => {
        if (!consented) throw new GatewayError('SWB_UPSTREAM_CONSENT_REQUIRED', 'consent first', { upstream: 'u' });
        return 'token';
      },
      invalidate: () => {},
    };
    const agent = new Agent();
    const inst = new UpstreamInstance(cfg.upstreams[0]!, createLogger('silent'), (c, log) => new SseClientTransport(c as RemoteUpstreamConfig, agent, credentials, log));
    try {
      await assert.rejects(inst.start(), (err: GatewayError) => err.code === 'SWB_UPSTREAM_CONSENT_REQUIRED');
      assert.equal(inst.awaitingConsent, true);
      consented = true;
      const ready = once(inst, 'ready');
      assert.equal(inst.retryConsent(), true);
      await assert.rejects(inst.start(), (err: GatewayError) => err.code !== 'SWB_UPSTREAM_CONSENT_REQUIRED');
      assert.equal(inst.awaitingConsent, false);
      assert.equal(inst.state, 'backoff');
      assert.equal(inst.restarts, 1, 'a timed restart is due');
      await ready; // the timed restart: before, none came
      assert.equal(inst.state, 'ready');
      assert.equal(up.gets(), 2);
    } finally {
      await inst.stop();
      await agent.close();
      up.close();
    }
  });
});
