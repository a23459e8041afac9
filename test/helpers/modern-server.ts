import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { startGateway, type RunningGateway } from './gateway.js';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'modern-server.mjs');

/** Starts test/fixtures/modern-server.mjs (SDK v2, modern only) on a free port; resolves with its URL once it listens. */
export function startModernServer(env: Record<string, string> = {}): Promise<{ child: ChildProcess; url: URL }> {
  const child = spawn(process.execPath, [FIXTURE, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve({ child, url: new URL(m[1]!) });
    });
    child.once('exit', (code) => reject(new Error(`modern fixture exited (${code}): ${out}`)));
  });
}

export interface ModernRig {
  upstream: { child: ChildProcess; url: URL };
  gw: RunningGateway;
  close(): Promise<void>;
}

/**
 * The modern fixture (started with `env`) as the one shared upstream "modern" of a gateway's /mcp,
 * pinning off: the setup every suite about a 2026-07-28 upstream shares. `upstream` adds to the
 * upstream's config (a circuit breaker, say), `config` to the gateway's (tenants).
 */
export async function startModernRig(
  opts: { env?: Record<string, string>; upstream?: Record<string, unknown>; config?: Record<string, unknown>; logLines?: string[] } = {},
): Promise<ModernRig> {
  const upstream = await startModernServer(opts.env);
  try {
    const gw = await startGateway(
      {
        pinning: { mode: 'off' },
        upstreams: [{ name: 'modern', transport: 'streamable-http', url: upstream.url.href, sharing: 'shared', pool: { size: 1 }, ...opts.upstream } as never],
        endpoints: [{ path: '/mcp', upstreams: ['modern'] }],
        ...opts.config,
      },
      { logLines: opts.logLines },
    );
    return {
      upstream,
      gw,
      close: async () => {
        await gw.close();
        upstream.child.kill('SIGTERM');
      },
    };
  } catch (e) {
    upstream.child.kill('SIGTERM');
    throw e;
  }
}
