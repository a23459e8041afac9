import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { listeningAddress } from './processes.js';

const ROOT = join(import.meta.dirname, '..', '..');
const CLI = ['--import', 'tsx', join(ROOT, 'src', 'main.ts')];

/** The quick start as a newcomer runs it, on a port of its own. */
export interface Quickstart {
  /** e.g. http://127.0.0.1:PORT */
  base: string;
  /** A development token from `switchboard token --tenant dev --sub SUB`, as the README says. */
  token(sub?: string): string;
  /** The gateway's log so far (JSON lines), for failure messages. */
  log(): string;
  close(): Promise<void>;
}

/**
 * `switchboard serve --config deploy/quickstart.yaml`, unmodified but for the port: SWITCHBOARD_PORT=0
 * and SWITCHBOARD_METRICS_PORT=0 let suites run side by side. The config's publicUrl stays
 * http://127.0.0.1:8080, so tokens carry that audience, as the README's do.
 */
export async function startQuickstart(): Promise<Quickstart> {
  const child = spawn(process.execPath, [...CLI, 'serve', '--config', join(ROOT, 'deploy', 'quickstart.yaml')], {
    cwd: ROOT,
    env: { ...process.env, SWITCHBOARD_PORT: '0', SWITCHBOARD_METRICS_PORT: '0', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const keep = (b: Buffer) => {
    log = (log + b.toString()).slice(-200_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let base: string;
  try {
    base = (await listeningAddress(child)).replace('localhost', '127.0.0.1');
  } catch (err) {
    await stop(child); // a gateway that did not come up in time is not left running
    throw err;
  }
  return {
    base,
    token: (sub = 'client-matrix') => devToken(sub),
    log: () => log,
    close: () => stop(child),
  };
}

function devToken(sub: string): string {
  const r = spawnSync(process.execPath, [...CLI, 'token', '--tenant', 'dev', '--sub', sub], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0) throw new Error(`switchboard token failed: ${r.stderr}`);
  return r.stdout.trim();
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
