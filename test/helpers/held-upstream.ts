// The draining-pool suites' common ground: a gateway whose one upstream, `held`, is the catalogue fixture
// (a `hold` tool that answers only when cancelled), and a call made to hold its pool while a reload
// replaces it, so the old pool drains beside the new one until the call ends.
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { FileGateway } from './file-gateway.js';
import { until } from './wait.js';

const CATALOGUE = join(import.meta.dirname, '..', 'fixtures', 'catalogue-server.mjs');

/** A config serving `held` (the fixture with `flags`, e.g. `['--set', 'hold']`) on /mcp; `over` replaces top-level keys. */
export function heldDoc(flags: string[], over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    server: { host: '127.0.0.1', port: 0 },
    metrics: { enabled: false },
    logging: { level: process.env.LOG_LEVEL ?? 'silent' },
    // Long: the held call ends because the test ends it (a cancel, a shutdown), never because the grace ran out.
    admin: { drainGraceMs: 120_000 },
    pinning: { mode: 'off' },
    tenants: [{ name: 'anonymous', endpoints: ['*'] }],
    upstreams: [{ name: 'held', transport: 'stdio', command: process.execPath, args: [CATALOGUE, ...flags], sandbox: 'none', sharing: 'shared', pool: { size: 1 } }],
    endpoints: [{ path: '/mcp', upstreams: ['held'] }],
    ...over,
  };
}

/** `--set` flags for the fixture's tool sets. */
export function sets(...names: string[]): string[] {
  return names.flatMap((s) => ['--set', s]);
}

export interface HeldCall {
  /** The pool the call holds, and its process. */
  old: ReturnType<FileGateway['app']['gateway']['pools']['get']> & object;
  oldPid: number;
  /** Aborting it cancels the call: the old pool may then finish draining. */
  stop: AbortController;
}

/** Starts a `hold` call through `client` and waits until it runs on the upstream. */
export async function holdCall(app: FileGateway['app'], client: Client): Promise<HeldCall> {
  const old = app.gateway.pools.get('held')!;
  const oldPid = [...old.instances][0]!.pid!;
  const stop = new AbortController();
  client.callTool({ name: 'hold', arguments: {} }, undefined, { signal: stop.signal }).catch(() => {});
  await until('the call runs on the upstream', () => old.inflight === 1);
  return { old, oldPid, stop };
}
