import { readFileSync } from 'node:fs';
import { readPublicJwks } from './auth/key-source.js';
import { keyName, unusableKeyReason } from './auth/key-usable.js';
import { ConfigError, readConfigFile, type LoadedConfig } from './config/load.js';
import type { Config } from './config/schema.js';
import { parsePinFile, pinsFileProblem } from './policy/pin-file.js';

/** Why a key file cannot serve, in the words of someone who has to fix it. */
function keyFileProblem(file: string, err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return `${file} does not exist (a relative path is relative to the config file's directory)`;
  if (code === 'EACCES') return `${file} cannot be read: permission denied`;
  if (code === 'EISDIR') return `${file} is a directory, not a key file`;
  if (err instanceof SyntaxError) return `${file} is neither a PEM public key nor JWK / JWKS JSON (${err.message})`;
  return `${file}: ${(err as Error).message}`;
}

/**
 * Each static verification key, read as serve reads it: a file serve would die on is a problem here. A key
 * the gateway can never verify with (unusableKeyReason) is a warning: the file's other keys still serve (a
 * bundle copied from an issuer may hold an old short one beside them), and a gateway that started with such
 * a file before must still start.
 */
function keyChecks(keys: readonly string[]): { problems: string[]; warnings: string[] } {
  const problems: string[] = [];
  const warnings: string[] = [];
  keys.forEach((file, i) => {
    try {
      const jwks = readPublicJwks(file);
      if (jwks.length === 0) problems.push(`auth.keys[${i}]: ${file} holds no keys`);
      jwks.forEach((jwk, k) => {
        const reason = unusableKeyReason(jwk);
        if (reason) warnings.push(`auth.keys[${i}]: ${file}: ${keyName(jwk, k)} can never verify a token (${reason}): every token naming it is refused 401 invalid_token (reason unusable_key); replace it or take it out`);
      });
    } catch (err) {
      problems.push(`auth.keys[${i}]: ${keyFileProblem(file, err)}`);
    }
  });
  return { problems, warnings };
}

/** The admin token file, read as the admin API reads it at each request. */
function adminTokenProblems(file: string | undefined): string[] {
  if (file === undefined) return [];
  try {
    const token = readFileSync(file, 'utf8').trim();
    return token.length < 32 ? [`admin.tokenFile: ${file} holds ${token.length === 0 ? 'no token' : 'a token shorter than 32 characters'}`] : [];
  } catch (err) {
    return [`admin.tokenFile: ${keyFileProblem(file, err)}`];
  }
}

/**
 * The pins file, read as serve reads it at start (when pins are on and kept there, not in Redis): one it
 * cannot parse stops serve, so check-config says so too rather than "ok". An absent file is no pins yet.
 */
function pinsFileProblems(config: Config): string[] {
  const file = config.pinning.file;
  if (!file || config.store.redis || config.upstreams.every((u) => (u.pinning ?? config.pinning.mode) === 'off')) return [];
  try {
    parsePinFile(file, readFileSync(file, 'utf8'));
    return [];
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? [] : [pinsFileProblem((err as Error).message)];
  }
}

/**
 * What `check-config` reports and what `serve` starts from, so that the two agree: the file's schema
 * problems and the files it names that serve would fail to read (ConfigError), and its warnings
 * (valid, but will not work as meant).
 *
 * `start`: also the pins file a starting gateway reads (serve, check-config). Not on a reload: the running
 * gateway keeps its pins in memory through a bad edit of that file, and an unrelated change still applies.
 */
export function checkConfigFile(file: string, env: NodeJS.ProcessEnv = process.env, start = false): LoadedConfig {
  const loaded = readConfigFile(file, env);
  const keys = keyChecks(loaded.config.auth.keys);
  const problems = [...keys.problems, ...adminTokenProblems(loaded.config.admin.tokenFile), ...(start ? pinsFileProblems(loaded.config) : [])];
  if (problems.length > 0) throw new ConfigError(file, problems);
  return keys.warnings.length > 0 ? { ...loaded, warnings: [...loaded.warnings, ...keys.warnings] } : loaded;
}
