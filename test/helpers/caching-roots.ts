import { startGateway, type RunningGateway } from './gateway.js';

/** What a 2026-07-28 request declares to be asked for roots, and the fixture's tool that shows what it has. */
export const ROOTS_CAPS = { roots: {} };
export const SHOW_ROOTS = { name: 'show_roots', arguments: {} };

/** A tools/call answer's first text, or the whole answer when it has none (an assertion then shows it). */
export const resultText = (body: any): string => body.result?.content?.[0]?.text ?? JSON.stringify(body);

/**
 * A gateway whose /mcp fronts test/fixtures/caching-roots-server.mjs per session (a 2025 server that asks
 * roots/list only when told notifications/initialized or roots/list_changed, and keeps the answer), with
 * `warm` spares started ahead; `config` adds to the gateway's (a continuation TTL).
 */
export function startCachingRootsGateway(warm: number, config: Record<string, unknown> = {}): Promise<RunningGateway> {
  const upstream = {
    name: 'roots',
    transport: 'stdio' as const,
    command: process.execPath,
    args: ['test/fixtures/caching-roots-server.mjs'],
    sandbox: 'none' as const,
    sharing: 'per-session' as const,
    pool: { size: 1, warm, max: 10 },
  };
  return startGateway({ pinning: { mode: 'off' }, upstreams: [upstream], endpoints: [{ path: '/mcp', upstreams: ['roots'] }], ...config });
}
