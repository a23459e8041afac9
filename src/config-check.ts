import { readFileSync } from 'node:fs';
import { readPublicJwks } from './auth/key-source.js';
import { ConfigError, readConfigFile, type LoadedConfig } from './config/load.js';

/** Why a key file cannot serve, in the words of someone who has to fix it. */
function keyFileProblem(file: string, err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return `${file} does not exist (a relative path is relative to the config file's directory)`;
  if (code === 'EACCES') return `${file} cannot be read: permission denied`;
  if (code === 'EISDIR') return `${file} is a directory, not a key file`;
  if (err instanceof SyntaxError) return `${file} is neither a PEM public key nor JWK / JWKS JSON (${err.message})`;
  return `${file}: ${(err as Error).message}`;
}

/** Each static verification key, read as serve reads it: a file serve would die on is a problem here. */
function keyProblems(keys: readonly string[]): string[] {
  return keys.flatMap((file, i) => {
    try {
      return readPublicJwks(file).length === 0 ? [`auth.keys[${i}]: ${file} holds no keys`] : [];
    } catch (err) {
      return [`auth.keys[${i}]: ${keyFileProblem(file, err)}`];
    }
  });
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
 * What `check-config` reports and what `serve` starts from, so that the two agree: the file's schema
 * problems and the files it names that serve would fail to read (ConfigError), and its warnings
 * (valid, but will not work as meant).
 */
export function checkConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  const loaded = readConfigFile(file, env);
  const problems = [...keyProblems(loaded.config.auth.keys), ...adminTokenProblems(loaded.config.admin.tokenFile)];
  if (problems.length > 0) throw new ConfigError(file, problems);
  return loaded;
}
