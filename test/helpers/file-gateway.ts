// A gateway started from a config file in a folder of its own, as `serve` starts one, so that a test can
// rewrite the file and reload it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp, type App } from '../../src/app.js';
import { checkConfigFile } from '../../src/config-check.js';
import { createLogger } from '../../src/observability/logger.js';
import type { RunningGateway } from './gateway.js';

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

export async function fileGateway(prefix: string, doc: Record<string, unknown>): Promise<FileGateway> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const file = join(dir, 'switchboard.yaml');
  const write = (d: Record<string, unknown>) => writeFileSync(file, JSON.stringify(d, null, 2));
  write(doc);
  const app = await buildApp(checkConfigFile(file).config, { configFile: file, logger: createLogger(process.env.LOG_LEVEL ?? 'silent') });
  const base = (await app.listen()).replace('localhost', '127.0.0.1');
  const gw = { app, base, url: (p = '/mcp') => new URL(p, base), close: () => app.close() };
  return { app, gw, file, write, close: async () => (await app.close(), rmSync(dir, { recursive: true, force: true })) };
}
