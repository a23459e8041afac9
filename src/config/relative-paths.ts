import { isAbsolute, resolve } from 'node:path';
import type { Config } from './schema.js';

/** A path the config wrote relatively (or absolutely) where a program or its code is expected. */
export interface WrittenPath {
  /** Where in the config, e.g. "upstreams[0].args[0]". */
  at: string;
  written: string;
  absolute: string;
  /** What a relative path was resolved against: the upstream's cwd, or the config file's directory. */
  base: 'cwd' | 'config';
  /** What a missing file means, when not "this upstream cannot start". */
  consequence?: string;
}

/**
 * Relative paths in a config file mean the same thing wherever the gateway is started from: they are
 * made absolute once, at load, against the config file's directory. The rule (README "Configuration
 * reference", "Paths"):
 * - `auth.keys`, `pinning.file`, `admin.tokenFile`, `vault.verifyUser.clientSecretFile`, an upstream's `cwd` and `auth.clientSecretFile`: always paths.
 * - an upstream's `command`: a path when it contains a "/" (`./server`, `bin/server`); a bare name
 *   (`node`, `npx`) is looked up on PATH when the server starts.
 * - an upstream's `args`: only `.`, `..` and what starts with `./` or `../` — an argument is often not a
 *   path at all (`stdio`, `--port`, `owner/repo`), and a leading "./" is how the file says it is one.
 * - `sandbox.readOnly` and `sandbox.writable`: always paths.
 * Where an upstream has a `cwd`, its command, arguments and sandbox paths are relative to that `cwd`
 * (as they would be for a shell started there), which itself is relative to the config file.
 * Returns the commands, path arguments and sandbox paths, for the checks that they exist.
 */
export function resolveConfigPaths(cfg: Config, baseDir: string): WrittenPath[] {
  const abs = (p: string, base: string) => (isAbsolute(p) ? p : resolve(base, p));
  cfg.auth.keys = cfg.auth.keys.map((k) => abs(k, baseDir));
  if (cfg.pinning.file !== undefined) cfg.pinning.file = abs(cfg.pinning.file, baseDir);
  if (cfg.admin.tokenFile !== undefined) cfg.admin.tokenFile = abs(cfg.admin.tokenFile, baseDir);
  const verify = cfg.vault.verifyUser;
  if (verify?.clientSecretFile !== undefined) verify.clientSecretFile = abs(verify.clientSecretFile, baseDir);
  const paths: WrittenPath[] = [];
  cfg.upstreams.forEach((u, i) => {
    if ((u.auth?.type === 'token-exchange' || u.auth?.type === 'user-oauth') && u.auth.clientSecretFile !== undefined) {
      // Read at a user's first start, not at load: checked here so that check-config names a missing one.
      const written = u.auth.clientSecretFile;
      u.auth.clientSecretFile = abs(written, baseDir);
      paths.push({ at: `upstreams[${i}].auth.clientSecretFile`, written, absolute: u.auth.clientSecretFile, base: 'config', consequence: 'this upstream cannot get a token' });
    }
    if (u.transport !== 'stdio') return;
    if (u.cwd !== undefined) u.cwd = abs(u.cwd, baseDir);
    const base = u.cwd ?? baseDir;
    const note = (at: string, p: string) => {
      const absolute = abs(p, base);
      paths.push({ at: `upstreams[${i}].${at}`, written: p, absolute, base: u.cwd === undefined ? 'config' : 'cwd' });
      return absolute;
    };
    if (u.command.includes('/')) u.command = note('command', u.command);
    u.args = u.args.map((a, j) => (isPathArgument(a) ? note(`args[${j}]`, a) : a));
    if (u.sandbox !== 'none') {
      u.sandbox.readOnly = u.sandbox.readOnly.map((p, j) => note(`sandbox.readOnly[${j}]`, p));
      u.sandbox.writable = u.sandbox.writable.map((p, j) => note(`sandbox.writable[${j}]`, p));
    }
  });
  return paths;
}

/** An argument the config marks as a relative path: ".", "..", "./…" or "../…". */
export function isPathArgument(arg: string): boolean {
  return arg === '.' || arg === '..' || arg.startsWith('./') || arg.startsWith('../');
}
