// What the suites on a session's log level meeting a new server stand on: test/fixtures/leveled-log-server.mjs as
// a stdio upstream (a new one knows no logging/setLevel, and sends warnings and worse), and the levels of the log
// messages a 2025 session is sent while its call of the server's log_each runs.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

/** What log_each sends a session set to debug: a line of each level. */
export const ALL_LEVELS = ['debug', 'info', 'warning', 'error'];

/** The upstream `name`: one instance when shared, else one per session (none warm); `extra` adds to its config. */
export function leveledLogUpstream(name: string, sharing: 'shared' | 'per-session', extra: { env?: Record<string, string>; restart?: { initialDelayMs: number } } = {}) {
  const pool = sharing === 'shared' ? { size: 1 } : { size: 1, warm: 0, max: 10 };
  return { name, transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/leveled-log-server.mjs'], sandbox: 'none' as const, sharing, pool, ...extra };
}

/** The levels of the log messages a 2025 session's call of log_each gets. */
export async function sessionLevels(client: Client): Promise<string[]> {
  const levels: string[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void levels.push(n.params.level));
  await client.callTool({ name: 'log_each', arguments: {} });
  return levels;
}
