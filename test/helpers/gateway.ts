import { buildApp, type App } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import type { ConfigInput } from '../../src/config/schema.js';
import { createLogger } from '../../src/observability/logger.js';

export const EVERYTHING = {
  command: process.execPath,
  args: ['node_modules/@modelcontextprotocol/server-everything/dist/index.js', 'stdio'],
  // Our own and the reference servers: trusted, run unconfined (the sandbox has its own suites).
  sandbox: 'none' as const,
};
export const FIXTURE = { command: process.execPath, args: ['test/fixtures/conformance-server.mjs'], sandbox: 'none' as const };

export interface RunningGateway {
  app: App;
  /** e.g. http://127.0.0.1:PORT */
  base: string;
  url(path?: string): URL;
  close(): Promise<void>;
}

/** Builds and starts a gateway on a free loopback port with the given (partial) config. */
export async function startGateway(
  input: Omit<ConfigInput, 'server'> & { server?: ConfigInput['server'] },
  opts: { logLines?: string[]; level?: string } = {},
): Promise<RunningGateway> {
  const level = opts.level ?? (opts.logLines ? 'info' : (process.env.LOG_LEVEL ?? 'silent'));
  // Metrics on a free port: tests run side by side.
  const config = parseConfig({ metrics: { port: 0 }, ...input, server: { host: '127.0.0.1', port: 0, ...input.server }, logging: { level } });
  const sink = opts.logLines;
  // The gateway's own logger (so what it adds to lines, trace ids with tracing on, is what tests read).
  const app = sink ? await buildApp(config, { logDestination: { write: (line: string) => void sink.push(line) } }) : await buildApp(config, { logger: createLogger(level) });
  const base = (await app.listen()).replace('localhost', '127.0.0.1');
  return {
    app,
    base,
    url: (path = '/mcp') => new URL(path, base),
    close: () => app.close(),
  };
}

export function everythingUpstream(name: string, sharing: 'shared' | 'per-session', extra: Record<string, unknown> = {}) {
  return { name, transport: 'stdio' as const, ...EVERYTHING, sharing, pool: { size: 1, warm: 1, max: 50 }, ...extra };
}

/**
 * A gateway of one endpoint (/mcp) on the conformance fixture ("one"), open to the anonymous tenant, its
 * log lines kept in `lines`: what a test of how a refusal is answered, counted and logged needs.
 */
export function startLoggedFixtureGateway(lines: string[]): Promise<RunningGateway> {
  return startGateway(
    {
      tenants: [{ name: 'anonymous', endpoints: ['*'] }],
      upstreams: [{ name: 'one', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: '/mcp', upstreams: ['one'] }],
    },
    { logLines: lines },
  );
}
