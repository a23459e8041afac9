import { isAbsolute, resolve } from 'node:path';
import type { Config } from './schema.js';

/**
 * Relative paths in a config file mean the same thing wherever the gateway is started from: they are
 * made absolute once, at load, against the config file's directory. The rule (README "Configuration
 * reference", "Paths"):
 * - `auth.keys`, `pinning.file`, an upstream's `cwd`: always paths.
 * - an upstream's `command`: a path when it contains a "/" (`./server`, `bin/server`); a bare name
 *   (`node`, `npx`) is looked up on PATH when the server starts.
 * - an upstream's `args`: only `.`, `..` and what starts with `./` or `../` — an argument is often not a
 *   path at all (`stdio`, `--port`, `owner/repo`), and a leading "./" is how the file says it is one.
 * - `sandbox.readOnly` and `sandbox.writable`: always paths.
 * Where an upstream has a `cwd`, its command, arguments and sandbox paths are relative to that `cwd`
 * (as they would be for a shell started there), which itself is relative to the config file.
 */
export function resolveConfigPaths(cfg: Config, baseDir: string): void {
  const abs = (p: string, base: string) => (isAbsolute(p) ? p : resolve(base, p));
  cfg.auth.keys = cfg.auth.keys.map((k) => abs(k, baseDir));
  if (cfg.pinning.file !== undefined) cfg.pinning.file = abs(cfg.pinning.file, baseDir);
  for (const u of cfg.upstreams) {
    if (u.transport !== 'stdio') continue;
    if (u.cwd !== undefined) u.cwd = abs(u.cwd, baseDir);
    const base = u.cwd ?? baseDir;
    if (u.command.includes('/')) u.command = abs(u.command, base);
    u.args = u.args.map((a) => (isPathArgument(a) ? resolve(base, a) : a));
    if (u.sandbox !== 'none') {
      u.sandbox.readOnly = u.sandbox.readOnly.map((p) => abs(p, base));
      u.sandbox.writable = u.sandbox.writable.map((p) => abs(p, base));
    }
  }
}

/** An argument the config marks as a relative path: ".", "..", "./…" or "../…". */
export function isPathArgument(arg: string): boolean {
  return arg === '.' || arg === '..' || arg.startsWith('./') || arg.startsWith('../');
}
