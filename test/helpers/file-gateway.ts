// Gateways that read a file in a folder of their own, which a test rewrites or removes while they run:
// fileGateway, started from a config file as `serve` starts one (a test reloads it); tokenFileGateway,
// whose admin API reads its token from admin.tokenFile.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp, type App } from '../../src/app.js';
import { checkConfigFile } from '../../src/config-check.js';
import { createLogger } from '../../src/observability/logger.js';
import { FIXTURE, startGateway, type RunningGateway } from './gateway.js';

export interface FileGateway {
  app: App;
  gw: RunningGateway;
  /** The config file's path. */
  file: string;
  /** Writes the file anew (as JSON, which YAML reads). */
  write: (doc: Record<string, unknown>) => void;
  /** Stops the gateway and removes the folder. */
  close: () => Promise<void>;
}

/** `opts.logLines`: the gateway's log lines (at info) are pushed there, as startGateway's are. */
export async function fileGateway(prefix: string, doc: Record<string, unknown>, opts: { logLines?: string[] } = {}): Promise<FileGateway> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const file = join(dir, 'switchboard.yaml');
  const write = (d: Record<string, unknown>) => writeFileSync(file, JSON.stringify(d, null, 2));
  write(doc);
  const sink = opts.logLines;
  const config = checkConfigFile(file).config;
  // At info whatever LOG_LEVEL says (the runner sets silent); a reload keeps the level (a restart-only setting).
  const app = sink
    ? await buildApp({ ...config, logging: { ...config.logging, level: 'info' } }, { configFile: file, logDestination: { write: (line: string) => void sink.push(line) } })
    : await buildApp(config, { configFile: file, logger: createLogger(process.env.LOG_LEVEL ?? 'silent') });
  const base = (await app.listen()).replace('localhost', '127.0.0.1');
  const gw = { app, base, url: (p = '/mcp') => new URL(p, base), close: () => app.close() };
  return { app, gw, file, write, close: async () => (await app.close(), rmSync(dir, { recursive: true, force: true })) };
}

export interface TokenFileGateway {
  gw: RunningGateway;
  /** The folder holding the token file. */
  dir: string;
  /** The token file's path (admin.tokenFile). */
  file: string;
  /** GET /sessions on the admin API with `token` as the bearer token. */
  sessions: (token: string) => Promise<Response>;
  /** Stops the gateway and removes the folder. */
  close: () => Promise<void>;
}

/**
 * A gateway (a fixture upstream on /mcp) whose admin API, on a loopback port, reads its token from a file
 * written with `content` in a new folder named from `prefix`; its log lines go to `logLines`.
 */
export async function tokenFileGateway(prefix: string, content: string, logLines: string[]): Promise<TokenFileGateway> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const file = join(dir, 'admin-token');
  writeFileSync(file, content);
  const remove = () => rmSync(dir, { recursive: true, force: true });
  let gw: RunningGateway;
  try {
    gw = await startGateway({
      admin: { enabled: true, host: '127.0.0.1', port: 0, tokenFile: file },
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    }, { logLines });
  } catch (err) {
    remove();
    throw err;
  }
  return {
    gw,
    dir,
    file,
    sessions: (token) => fetch(new URL('/sessions', gw.app.adminUrl!), { headers: { authorization: `Bearer ${token}` } }),
    close: async () => (await gw.close(), remove()),
  };
}
