import type { UpstreamConfig } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import { StdioTransport } from './stdio-transport.js';

/** Variables a child needs to find its interpreter and behave; nothing that could carry a secret. */
const PASSTHROUGH = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'];

export function childEnv(declared: Record<string, string>, parent: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of PASSTHROUGH) if (parent[k] !== undefined) env[k] = parent[k]!;
  return { ...env, ...declared };
}

export function stdioTransportFactory(upstream: UpstreamConfig, logger: Logger): StdioTransport {
  return new StdioTransport({
    command: upstream.command,
    args: upstream.args,
    cwd: upstream.cwd,
    env: childEnv(upstream.env),
    maxLineBytes: upstream.maxLineBytes,
    logger,
  });
}
