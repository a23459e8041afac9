// The gateway's side of the unit tests of a remote upstream: a started pool of one upstream "u", its transports
// built as the gateway builds them (one undici Agent), what legacy-http-upstream.ts, legacy-sse-upstream.ts and
// sdk-http-upstream.ts hand out.
import { Agent } from 'undici';
import { parseConfig } from '../../src/config/load.js';
import type { RemoteUpstreamConfig } from '../../src/config/schema.js';
import { createLogger, type Logger } from '../../src/observability/logger.js';
import type { Transport } from '../../src/transport/transport.js';
import type { UpstreamInstance } from '../../src/upstream/upstream-instance.js';
import { UpstreamPool } from '../../src/upstream/upstream-pool.js';

export interface RemotePool {
  pool: UpstreamPool;
  /** The pool's one instance. */
  instance: UpstreamInstance;
  close(): Promise<void>;
}

/**
 * `upstream`: u's config but its name (transport, url, settings); `transport` makes each of its transports;
 * `agentOptions`, from u's parsed config, the options of the one undici Agent they share.
 */
export async function startRemotePool(
  upstream: Record<string, unknown>,
  transport: (u: RemoteUpstreamConfig, agent: Agent, log: Logger) => Transport,
  agentOptions: (u: RemoteUpstreamConfig) => Agent.Options = () => ({}),
): Promise<RemotePool> {
  const cfg = parseConfig({ upstreams: [{ name: 'u', ...upstream } as never], endpoints: [{ path: '/mcp', upstreams: ['u'] }] }, 'test', {});
  const agent = new Agent(agentOptions(cfg.upstreams[0] as RemoteUpstreamConfig));
  const pool = new UpstreamPool(cfg.upstreams[0]!, createLogger('silent'), (u, log) => transport(u as RemoteUpstreamConfig, agent, log));
  try {
    await pool.start();
  } catch (err) {
    await pool.close();
    await agent.close();
    throw err;
  }
  return { pool, instance: [...pool.instances][0]!, close: async () => (await pool.close(), await agent.close()) };
}
