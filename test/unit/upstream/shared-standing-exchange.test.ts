// A per-user upstream that exchanges each client's token (RFC 8693) and a 2026-07-28 standing several tokens
// of a subject share (UpstreamCaller.sharedByTokens: made before a reload gave its endpoint that upstream).
// No token is that standing's to exchange, yet leasing the upstream for it (the reload's rebinding) started an
// instance, which made no exchange, waited for a token that never came and idled out: a connection wasted,
// and an instance in operators' views for a standing no request uses. A memory upstream stands in for the
// remote one (no exchange is made either way).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/load.js';
import { GatewayError } from '../../../src/errors.js';
import { createLogger } from '../../../src/observability/logger.js';
import type { UpstreamCaller } from '../../../src/upstream/upstream-caller.js';
import { UpstreamPool } from '../../../src/upstream/upstream-pool.js';
import { memoryUpstream } from '../../helpers/memory-upstream.js';

function exchangingPool(): UpstreamPool {
  const auth = { type: 'token-exchange', tokenEndpoint: 'http://127.0.0.1:9/token', clientId: 'gw', clientSecret: 'never-sent', audience: 'https://tickets.test' };
  const cfg = parseConfig(
    {
      upstreams: [{ name: 'tickets', transport: 'streamable-http', url: 'http://127.0.0.1:9/mcp', sharing: 'per-user', healthCheck: { intervalMs: 0 }, auth }],
      endpoints: [{ path: '/mcp', upstreams: ['tickets'] }],
    },
    'test',
    {},
  );
  return new UpstreamPool(cfg.upstreams[0]!, createLogger('silent'), () => memoryUpstream());
}

const standing = (id: string, sharedByTokens: boolean): UpstreamCaller => ({
  id,
  tenant: 'acme',
  principal: { issuer: 'https://issuer.test', subject: 'alice', tenant: 'acme' },
  sharedByTokens,
  era: 'modern',
  clientRequest: async () => ({}),
  clientNotify: () => {},
});

describe("a token-exchange upstream and a standing several of a subject's tokens share", () => {
  it('starts no instance for it, reaches none for it, and refuses its call saying why and what to do', async () => {
    const pool = exchangingPool();
    try {
      await pool.start();
      const shared = standing('modern-shared', true);
      assert.equal(await pool.lease(shared), undefined);
      assert.equal(pool.instances.size, 0, 'an instance was started for a standing that has no token of its own to exchange');
      assert.deepEqual(pool.instancesFor(shared), []);
      assert.throws(
        () => pool.instanceFor(shared),
        (e: unknown) =>
          e instanceof GatewayError &&
          e.code === 'SWB_UPSTREAM_CREDENTIAL_REFUSED' &&
          e.details?.reason === 'no_subject_token' &&
          /several of your tokens share/.test(e.message) &&
          /send the request again/.test(e.message) &&
          !/expired/.test(e.message),
      );
      assert.equal(pool.instances.size, 0);
      // A standing of one token is served as ever: its instance starts with its lease.
      const ready = once(pool, 'ready');
      await pool.lease(standing('modern-own', false));
      assert.equal(pool.instances.size, 1);
      await ready;
    } finally {
      await pool.close();
    }
  });
});
