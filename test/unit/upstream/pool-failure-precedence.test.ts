// A pool with no instance up tells its caller why. Its instances can fail for different reasons at once (a rate
// limiter in front of the upstream throttles one start while another reaches a server that speaks no era the
// gateway does, or the authorization server refuses the user's token for another). Before, the first instance
// that had failed decided: a throttled one listed first hid the other's incompatibility or refused credential
// behind "retry in 30 s" (the next start, throttled again, hid it again), one whose link failed (a connection
// reset) behind "restarting, retry shortly", and a refused credential hid incompatibility; listed second, they did
// not. Now the order is defined: no era spoken, then a refused credential, then the soonest throttled restart,
// then "restarting", whatever the instances' order.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Agent } from 'undici';
import { parseConfig } from '../../../src/config/load.js';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import { createLogger } from '../../../src/observability/logger.js';
import { StreamableHttpClientTransport } from '../../../src/upstream/streamable-http-client.js';
import { UpstreamTransports } from '../../../src/upstream/transport-factory.js';
import { UpstreamPool } from '../../../src/upstream/upstream-pool.js';
import { startExchangeServer } from '../../helpers/exchange-server.js';
import { testCaller } from '../../helpers/sdk-http-upstream.js';
import { ISSUER, makeKey, PUBLIC_URL, signToken } from '../../helpers/tokens.js';

/** An HTTP server: under /throttled every POST is answered 429 with Retry-After: 30; under /reset its connection is reset
 * (no answer: a failed start the restart retries); elsewhere a plain 400 (no era it speaks). */
async function upstream() {
  const server = createServer((req, res) => {
    req.resume().on('end', () => {
      if (req.url!.startsWith('/reset')) return void req.socket.destroy();
      if (req.url!.startsWith('/throttled')) return void res.writeHead(429, { 'content-type': 'text/plain', 'retry-after': '30' }).end('slow down');
      res.writeHead(400, { 'content-type': 'text/plain' }).end('nope');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => (server.closeAllConnections(), server.close()) };
}

/** A shared pool of legacy-era instances whose links go, in the instances' order, to `paths`. */
async function pool(base: string, paths: string[]) {
  const upstreamCfg = { name: 'u', transport: 'streamable-http', url: `${base}/mcp`, era: 'legacy', pool: { size: paths.length }, healthCheck: { intervalMs: 0 }, restart: { initialDelayMs: 60_000, maxDelayMs: 60_000 } };
  const cfg = parseConfig({ upstreams: [upstreamCfg], endpoints: [{ path: '/mcp', upstreams: ['u'] }] }, 'test', {});
  const agent = new Agent();
  let made = 0;
  // Instances are created and started in order: the n-th link made is the n-th instance's.
  const p = new UpstreamPool(cfg.upstreams[0]!, createLogger('error', { write: () => {} }), (u, log) => {
    const url = `${base}${paths[made++ % paths.length]}`;
    return new StreamableHttpClientTransport({ ...(u as RemoteUpstreamConfig), url }, agent, undefined, log);
  });
  await p.start();
  return { pool: p, close: async () => (await p.close(), await agent.close()) };
}

type Failure = { code?: string; message: string; details?: Record<string, unknown> };

describe('a pool with none up: a failure someone must act on is told before one that waiting ends', () => {
  for (const paths of [['/throttled', '/odd'], ['/odd', '/throttled'], ['/reset', '/odd']]) {
    it(`instances ${paths.join(', ')}: incompatible, not throttled nor restarting`, async () => {
      const up = await upstream();
      const gw = await pool(up.base, paths);
      try {
        for (const inst of gw.pool.instances) assert.equal(inst.state, 'backoff');
        assert.equal([...gw.pool.instances].filter((i) => i.incompatible).length, 1);
        assert.equal([...gw.pool.instances].some((i) => i.startThrottling()), paths.includes('/throttled'));
        assert.throws(
          () => gw.pool.instanceFor(testCaller),
          (err: Failure) => {
            assert.equal(err.code, 'SWB_UPSTREAM_PROTOCOL', err.message);
            assert.equal(err.details?.incompatible, true, err.message);
            assert.match(err.message, /incompatible/);
            return true;
          },
        );
      } finally {
        await gw.close();
        up.close();
      }
    });
  }
});

describe('a per-user pool with none up: a refused credential is told before a throttled start, incompatibility before both', () => {
  const cases = [
    { other: '/throttled', code: 'SWB_UPSTREAM_CREDENTIAL_REFUSED' },
    { other: '/odd', code: 'SWB_UPSTREAM_PROTOCOL' },
  ];
  for (const { other, code } of cases) {
    for (const otherFirst of [true, false]) {
      it(`alice's token refused, another instance's link to ${other} ${otherFirst ? 'first' : 'second'}: ${code}`, async () => {
        const up = await upstream();
        const key = await makeKey('k1');
        const as = await startExchangeServer({ clientId: 'gw', clientSecret: 's', subjectIssuer: ISSUER, subjectKeys: [key.publicJwk], subjectAudience: PUBLIC_URL });
        as.refuse.add('alice');
        const auth = { type: 'token-exchange', tokenEndpoint: as.tokenEndpoint, clientId: 'gw', clientSecret: 's', audience: 'https://tickets.test' };
        const upstreamCfg = { name: 'u', transport: 'streamable-http', url: `${up.base}/odd`, era: 'legacy', sharing: 'per-user', auth, pool: { size: 2 }, healthCheck: { intervalMs: 0 }, restart: { initialDelayMs: 60_000, maxDelayMs: 60_000 } };
        const cfg = parseConfig({ upstreams: [upstreamCfg], endpoints: [{ path: '/mcp', upstreams: ['u'] }] }, 'test', {});
        const transports = new UpstreamTransports();
        const agent = new Agent();
        let made = 0;
        // One instance's link has no credential and goes to `other`; the other's exchanges alice's token, refused.
        const p = new UpstreamPool(cfg.upstreams[0]!, createLogger('error', { write: () => {} }), (u, log, owner) =>
          (made++ === 0) === otherFirst ? new StreamableHttpClientTransport({ ...(u as RemoteUpstreamConfig), url: `${up.base}${other}`, auth: undefined }, agent, undefined, log) : transports.create(u, log, owner),
        );
        const principal = { issuer: ISSUER, subject: 'alice', tenant: 'acme' };
        transports.subjectTokens.remember(principal, `Bearer ${await signToken(key, { sub: 'alice' })}`);
        const caller = { ...(testCaller as object), principal } as never;
        try {
          await p.lease(caller);
          const instances = [...p.instances];
          assert.equal(instances.length, 2);
          await Promise.all(instances.map((i) => (i.state === 'backoff' ? undefined : once(i, 'down'))));
          assert.ok(instances.some((i) => i.lastError?.code === 'SWB_UPSTREAM_CREDENTIAL_REFUSED'), 'one instance was refused its credential');
          assert.equal(instances.some((i) => i.startThrottling()), other === '/throttled');
          assert.throws(
            () => p.instanceFor(caller),
            (err: Failure) => {
              assert.equal(err.code, code, `${err.message} | ${instances.map((i) => `${i.incompatible} ${i.lastFailure}`).join(' | ')}`);
              return true;
            },
          );
        } finally {
          await p.close();
          await agent.close();
          await as.close();
          up.close();
        }
      });
    }
  }
});
