import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root: the CLI runs from it, and the quick start's files are found from it. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The CLI as a developer runs it from a checkout (TypeScript through tsx, no build). */
export const CLI = ['--import', 'tsx', join(ROOT, 'src', 'main.ts')];

/** The JSON-RPC messages of an SSE body ("data:" lines). */
export function sseMessages(body: string): Array<Record<string, unknown>> {
  return body
    .split('\n')
    .filter((l) => l.startsWith('data:') && l.slice(5).trim() !== '')
    .map((l) => JSON.parse(l.slice(5)) as Record<string, unknown>);
}

/** Runs the CLI with `args` to its end (30 s at most), with `env` added to the test's. */
export function runCli(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [...CLI, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 30_000 });
}

/** A config file of `text` in a new temporary directory. */
export function tempConfig(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'swb-cli-'));
  const file = join(dir, 'config.yaml');
  writeFileSync(file, text);
  return file;
}
