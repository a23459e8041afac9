// A legacy HTTP+SSE upstream's start is bounded by http.headersTimeoutMs once, from the GET to its endpoint
// event: before, the response headers had headersTimeoutMs and then the endpoint event headersTimeoutMs more, so
// an upstream slow at both held the start (and every call queued behind it) for up to twice the bound. Here the
// headers come after 60% of it and the endpoint 60% later: within each bound alone, past the one bound.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Agent } from 'undici';
import { parseConfig } from '../../../src/config/load.js';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import { createLogger } from '../../../src/observability/logger.js';
import { SseClientTransport } from '../../../src/upstream/sse-client.js';

const BOUND_MS = 2000;

async function startAgainst(headersAfterMs: number, endpointAfterMs: number): Promise<Error | undefined> {
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, f: () => void) => timers.add(setTimeout(f, ms));
  const server = createServer((req, res) => {
    req.resume();
    later(headersAfterMs, () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': open\n\n');
      later(endpointAfterMs, () => res.write('event: endpoint\ndata: /messages\n\n'));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sse`;
  const cfg = parseConfig({ upstreams: [{ name: 'legacy', transport: 'sse', url, http: { headersTimeoutMs: BOUND_MS } }], endpoints: [{ path: '/mcp', upstreams: ['legacy'] }] }).upstreams[0] as RemoteUpstreamConfig;
  const agent = new Agent();
  const t = new SseClientTransport(cfg, agent, undefined, createLogger('silent'));
  try {
    await t.start();
    return undefined;
  } catch (err) {
    return err as Error;
  } finally {
    for (const timer of timers) clearTimeout(timer);
    await t.close();
    await agent.close();
    server.closeAllConnections();
    server.close();
  }
}

describe('a legacy HTTP+SSE start, slow at its headers and at its endpoint event', () => {
  it('fails once headersTimeoutMs has passed in all, saying no endpoint event came within it', async () => {
    const err = await startAgainst(0.6 * BOUND_MS, 0.6 * BOUND_MS);
    assert.ok(err, 'the start succeeded past the one bound');
    assert.match(err.message, /upstream "legacy" sent no endpoint event within http\.headersTimeoutMs \(2000 ms\)/);
  });

  it('succeeds when both come within it', async () => {
    assert.equal(await startAgainst(0.2 * BOUND_MS, 0.2 * BOUND_MS), undefined);
  });
});
