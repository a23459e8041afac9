import { realpathSync } from 'node:fs';
import { join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from './schema.js';
import { SYSTEM_TREES } from './system-trees.js';

/** A file of the gateway's own that a sandboxed server must not get at, and what it is. */
interface GatewayFile {
  path: string;
  what: string;
  /** Its content is a secret (a server that reads it has it); the others matter when written. */
  secret: boolean;
  /** Folders of its own code: a writable path inside one is refused too (the gateway's dist, node_modules). */
  code?: string[];
}

/** The gateway's package (src/config/ or dist/config/, two levels down): the code it runs. */
const PACKAGE_ROOT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');

const real = (p: string): string => {
  try {
    return realpathSync(p);
  } catch {
    return p; // not there (yet): compared as written
  }
};

const within = (path: string, root: string): boolean => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);

/** The files the gateway reads its settings, keys, pins and secrets from (paths already absolute). */
function gatewayFiles(cfg: Config, configFile: string | undefined): GatewayFile[] {
  const files: GatewayFile[] = [];
  // Its own code: rewritten, it runs at the next start as the gateway, with every secret the gateway holds.
  files.push({ path: PACKAGE_ROOT, what: "the gateway's own program", secret: false, code: [join(PACKAGE_ROOT, 'dist'), join(PACKAGE_ROOT, 'node_modules')] });
  files.push({ path: process.execPath, what: "the gateway's own program (node)", secret: false });
  // The config may hold literal secrets; and whoever writes it decides every upstream's sandbox.
  if (configFile !== undefined) files.push({ path: configFile, what: 'the config file', secret: true });
  cfg.auth.keys.forEach((k, i) => files.push({ path: k, what: `auth.keys[${i}]`, secret: false }));
  if (cfg.pinning.file !== undefined) files.push({ path: cfg.pinning.file, what: 'pinning.file', secret: false });
  if (cfg.admin.tokenFile !== undefined) files.push({ path: cfg.admin.tokenFile, what: 'admin.tokenFile', secret: true });
  const verify = cfg.vault.verifyUser?.clientSecretFile;
  if (verify !== undefined) files.push({ path: verify, what: 'vault.verifyUser.clientSecretFile', secret: true });
  cfg.upstreams.forEach((u, i) => {
    const secretFile = u.auth !== undefined && 'clientSecretFile' in u.auth ? u.auth.clientSecretFile : undefined;
    if (typeof secretFile === 'string') files.push({ path: secretFile, what: `upstreams[${i}].auth.clientSecretFile`, secret: true });
  });
  return files;
}

/** Whether a declared path lies inside one of the file's code folders (as written, or where it leads). */
const insideCode = (f: GatewayFile, p: string): boolean => (f.code ?? []).some((d) => within(p, d) || within(real(p), real(d)));

/**
 * A bubblewrap server sees only its declared paths, so a declared path that holds one of the gateway's own
 * files hands it over. Writable (the host folder, not a private tmpfs): the server rewrites the config (the
 * next reload or restart runs it as `sandbox: none`), replaces a key of auth.keys (it signs tokens for any
 * user), or edits the pins (it approves its own tools): `problems`, and the config is refused, as a
 * writable path holding the server's own program is. ReadOnly over a secret (the config, a token or client
 * secret file): the server reads it; a `warning`. The `limits` and `none` profiles see the gateway's
 * filesystem as its user does (README, Sandbox profiles): not judged here.
 */
export function sandboxGatewayFiles(cfg: Config, configFile: string | undefined, trees: readonly string[] = SYSTEM_TREES): { problems: string[]; warnings: string[] } {
  const files = gatewayFiles(cfg, configFile).map((f) => ({ ...f, real: real(f.path) }));
  const problems: string[] = [];
  const warnings: string[] = [...inSystemTrees(cfg, files, trees)];
  cfg.upstreams.forEach((u, i) => {
    if (u.transport !== 'stdio' || u.sandbox === 'none' || u.sandbox.type !== 'bubblewrap') return;
    const writable = u.sandbox.writableSizeMb === undefined ? u.sandbox.writable : [];
    const declared = [...writable.map((p, j) => ({ p, key: `writable[${j}]`, writes: true })), ...u.sandbox.readOnly.map((p, j) => ({ p, key: `readOnly[${j}]`, writes: false }))];
    for (const { p, key, writes } of declared) {
      const held = files.filter((f) => (writes || f.secret) && (within(f.path, p) || within(f.real, real(p)) || (writes && insideCode(f, p))));
      if (held.length === 0) continue;
      const named = held.map((f) => `${f.what} ${f.path}`).join(', ');
      const at = `upstreams[${i}].sandbox.${key}`;
      if (writes) problems.push(`${at}: ${p} holds ${named}: the server could rewrite the gateway's own files (run as sandbox: none at the next reload, sign its own tokens, approve its own tools); share a folder without them, or set writableSizeMb`);
      else warnings.push(`${at}: ${p} holds ${named}: the server "${u.name}" can read it; share a folder without it`);
    }
  });
  return { problems, warnings };
}

/**
 * The secret files inside a system tree (/usr, /lib…): every bubblewrap sandbox mounts those whole,
 * undeclared, so each such server reads them (a config in /usr/src/app, the node images' WORKDIR, or in
 * /usr/local/etc). Before, only a declared readOnly path over one was said.
 */
function inSystemTrees(cfg: Config, files: ReadonlyArray<GatewayFile & { real: string }>, trees: readonly string[]): string[] {
  const sandboxed = cfg.upstreams.filter((u) => u.transport === 'stdio' && u.sandbox !== 'none' && u.sandbox.type === 'bubblewrap').map((u) => `"${u.name}"`);
  if (sandboxed.length === 0) return [];
  return files.flatMap((f) => {
    const tree = trees.find((t) => f.secret && (within(f.path, t) || within(f.real, real(t))));
    if (tree === undefined) return [];
    return [`${f.what} ${f.path} lies inside ${tree}, which every bubblewrap sandbox mounts read-only: the server${sandboxed.length === 1 ? '' : 's'} ${sandboxed.join(', ')} can read it; keep the gateway's secret files out of ${trees.join(', ')}`];
  });
}
