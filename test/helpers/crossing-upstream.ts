// Pools of real stdio processes running test/fixtures/crossing-server.mjs (see there what it does), for
// tests of messages that cross the gateway's on a shared or per-user process.
import { parseConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/observability/logger.js';
import { StdioTransport } from '../../src/upstream/stdio-transport.js';
import type { UpstreamCaller } from '../../src/upstream/upstream-caller.js';
import { UpstreamPool } from '../../src/upstream/upstream-pool.js';

const FIXTURE = 'test/fixtures/crossing-server.mjs';
const logger = createLogger('silent');

/** The config of upstream "u" (one endpoint /mcp serving it) in the given sharing mode. */
export function crossingConfig(sharing: 'shared' | 'per-user', pool: Record<string, unknown> = {}) {
  return parseConfig(
    { upstreams: [{ name: 'u', transport: 'stdio', command: process.execPath, sharing, healthCheck: { intervalMs: 0 }, pool }], endpoints: [{ path: '/mcp', upstreams: ['u'] }] },
    'test',
    {},
  );
}

export function crossingPool(config: ReturnType<typeof crossingConfig>): UpstreamPool {
  const transport = () => new StdioTransport({ command: process.execPath, args: [FIXTURE], env: { PATH: process.env.PATH! }, maxLineBytes: 1 << 20, logger, stopGraceMs: 300 });
  return new UpstreamPool(config.upstreams[0]!, logger, transport);
}

/** A session that records what the upstream side puts to it, and answers every request naming itself. */
export function recordingCaller(id: string, principal?: UpstreamCaller['principal']) {
  const asked: Array<{ method: string; params: unknown }> = [];
  const notified: Array<{ method: string; params: unknown }> = [];
  const caller: UpstreamCaller = {
    id,
    tenant: 't',
    ...(principal ? { principal } : {}),
    clientRequest: async (method, params) => (asked.push({ method, params }), { role: 'assistant', content: { type: 'text', text: `answer from ${id}` }, model: 'm' }),
    clientNotify: (method, params) => void notified.push({ method, params }),
  };
  return { caller, asked, notified };
}

/** What the process has heard so far (methods, and its own requests' answers), asked by a call of its own. */
export async function heard(pool: UpstreamPool, caller: UpstreamCaller): Promise<Array<Record<string, unknown>>> {
  const r = await pool.instanceFor(caller).request('tools/call', { name: 'heard', arguments: {} }, {});
  return JSON.parse((r.content as Array<{ text: string }>)[0]!.text) as Array<Record<string, unknown>>;
}
