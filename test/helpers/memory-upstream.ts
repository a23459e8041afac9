// Upstream pools over in-memory upstreams (a memory pair whose far end answers initialize), for unit
// tests of how pools share instances; no process is started.
import { parseConfig } from '../../src/config/load.js';
import type { JsonRpcRequest } from '../../src/jsonrpc/types.js';
import { createLogger } from '../../src/observability/logger.js';
import { MemoryTransport } from '../../src/transport/memory-pair.js';
import type { UpstreamCaller } from '../../src/upstream/upstream-caller.js';
import { UpstreamPool } from '../../src/upstream/upstream-pool.js';

/** What the memory upstreams of a pool received, and how they answer. */
export class MemoryServer {
  readonly requests: JsonRpcRequest[] = [];
  /** The far end of every connection made, newest last (close one to make its instance restart). */
  readonly ends: MemoryTransport[] = [];
  /** Methods answered with an internal error. */
  readonly failing = new Set<string>();

  received(method: string): JsonRpcRequest[] {
    return this.requests.filter((r) => r.method === method);
  }
}

/**
 * An upstream on the far end of a memory pair: answers initialize with its identity, every other
 * request with an empty result (or an error when `server.failing` names it).
 */
export function memoryUpstream(server = new MemoryServer()): MemoryTransport {
  const [gw, up] = MemoryTransport.pair();
  server.ends.push(up);
  up.onmessage = (m) => {
    if (!('method' in m) || !('id' in m)) return;
    const req = m as JsonRpcRequest;
    server.requests.push(req);
    if (req.method === 'initialize') void up.send({ jsonrpc: '2.0', id: req.id, result: { protocolVersion: '2025-11-25', capabilities: { tools: {}, resources: { subscribe: true } }, serverInfo: { name: 'fake', version: '1' } } });
    else if (server.failing.has(req.method)) void up.send({ jsonrpc: '2.0', id: req.id, error: { code: -32603, message: `${req.method} failed` } });
    else void up.send({ jsonrpc: '2.0', id: req.id, result: {} });
  };
  return gw;
}

/** A pool of upstream "u" in the given sharing mode, over memory upstreams; `pool` is its pool config. */
export function memoryPool(sharing: 'shared' | 'per-tenant' | 'per-session', pool: Record<string, unknown> = {}, server = new MemoryServer()): UpstreamPool {
  const cfg = parseConfig(
    {
      upstreams: [{ name: 'u', transport: 'stdio', command: 'never-run', sharing, healthCheck: { intervalMs: 0 }, restart: { initialDelayMs: 10, maxDelayMs: 20 }, pool: { warm: 0, acquireTimeoutMs: 60_000, ...pool } }],
      endpoints: [{ path: '/mcp', upstreams: ['u'] }],
    },
    'test',
    {},
  );
  return new UpstreamPool(cfg.upstreams[0]!, createLogger('silent'), () => memoryUpstream(server));
}

let sessions = 0;

/** A session of a tenant, as the upstream side sees it. */
export function testCaller(tenant: string): UpstreamCaller {
  return { id: `s${++sessions}`, tenant, clientRequest: async () => ({}), clientNotify: () => {} };
}
