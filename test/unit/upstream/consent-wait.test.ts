// An upstream instance that failed to start only because its user has not consented waits for the user:
// no timed restart, from its very first start on. (A timed start racing the user's consent could read the
// vault just before the token landed and fail the call the user makes right after consenting.)
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Agent } from 'undici';
import { parseConfig } from '../../../src/config/load.js';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import { GatewayError } from '../../../src/errors.js';
import { createLogger } from '../../../src/observability/logger.js';
import type { BearerSource } from '../../../src/upstream/bearer-source.js';
import { StreamableHttpClientTransport } from '../../../src/upstream/streamable-http-client.js';
import { UpstreamInstance } from '../../../src/upstream/upstream-instance.js';

const logger = createLogger('silent');

describe('an upstream instance awaiting its user’s consent', () => {
  it('schedules no restart after its first start fails for want of consent, and starts again when asked', async () => {
    const cfg = parseConfig({
      upstreams: [
        {
          name: 'tickets',
          transport: 'streamable-http',
          url: 'http://127.0.0.1:9/mcp',
          restart: { initialDelayMs: 10, maxDelayMs: 10 },
        },
      ],
      endpoints: [{ path: '/mcp', upstreams: ['tickets'] }],
    });
    // The credential is the test's (a user-oauth upstream's would read the vault); the instance's logic is the same.
    const u = cfg.upstreams[0] as RemoteUpstreamConfig;
    let consented = false;
    let asked = 0;
    const credentials: BearerSource = {
      token: async () => {
        asked++;
        if (!consented) throw new GatewayError('SWB_UPSTREAM_CONSENT_REQUIRED', 'consent first', { upstream: 'tickets' });
        throw new GatewayError('SWB_UPSTREAM_UNAVAILABLE', 'a token, but no upstream here', { upstream: 'tickets' });
      },
      invalidate: () => {},
    };
    const agent = new Agent();
    let made = 0;
    const inst = new UpstreamInstance(u, logger, (c) => (made++, new StreamableHttpClientTransport(c as RemoteUpstreamConfig, agent, credentials, logger)));
    try {
      await assert.rejects(inst.start(), (err: GatewayError) => err.code === 'SWB_UPSTREAM_CONSENT_REQUIRED');
      assert.equal(inst.awaitingConsent, true);
      assert.equal(inst.restarts, 0, 'waiting for consent is not a restart');
      // A timed restart would be due after 10 ms; give it twenty times that to show itself.
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(made, 1, 'no start but the first');
      assert.equal(asked, 1);
      assert.equal(inst.state, 'backoff');
      // The user's next call starts it (retryConsent); here the token is there but the upstream is not,
      // which is a failure like any other: the instance then restarts on its timer.
      consented = true;
      assert.equal(inst.retryConsent(), true);
      await assert.rejects(inst.start(), (err: GatewayError) => err.code === 'SWB_UPSTREAM_UNAVAILABLE');
      assert.equal(inst.awaitingConsent, false);
      assert.equal(inst.restarts, 1);
    } finally {
      await inst.stop();
      await agent.close();
    }
  });
});
