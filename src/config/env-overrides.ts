import { isPlainObject } from './plain-object.js';

/** Each path an override writes, and the variable it comes from: a problem there names the variable (overrideSource). */
const VARIABLE_OF: Readonly<Record<string, string>> = {
  'server.host': 'SWITCHBOARD_HOST',
  'server.port': 'SWITCHBOARD_PORT',
  'logging.level': 'LOG_LEVEL',
  'metrics.port': 'SWITCHBOARD_METRICS_PORT',
  'store.redis.url': 'REDIS_URL',
  'vault.key': 'SWITCHBOARD_VAULT_KEY',
  'vault.previousKeys': 'SWITCHBOARD_VAULT_PREVIOUS_KEYS',
  'modern.requestStateKey': 'SWITCHBOARD_REQUEST_STATE_KEY',
  'modern.requestStatePreviousKeys': 'SWITCHBOARD_REQUEST_STATE_PREVIOUS_KEYS',
};

/**
 * A config problem ("path: what is wrong") at a path an override wrote says which variable it came from:
 * it named only the path, which the file may not even have (vault.key from SWITCHBOARD_VAULT_KEY), or
 * have with a good value (port: 1234 beside SWITCHBOARD_PORT=80a), so the operator looked in the wrong place.
 */
export function overrideSource(problem: string, written: ReadonlySet<string>): string {
  const path = [...written].find((p) => problem.startsWith(`${p}: `) || problem.startsWith(`${p}[`));
  return path === undefined ? problem : `${problem} (the value of the environment variable ${VARIABLE_OF[path]}, which overrides the file)`;
}

/** A port as the environment gives it: digits only, else left as text for the schema to refuse ("expected number", not NaN). */
const portOf = (s: string): number | string => (/^\s*\d+\s*$/.test(s) ? Number(s) : s);

const keyList = (s: string): string[] =>
  s
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);

/**
 * Writes the environment's overrides into a decoded config file: SWITCHBOARD_HOST, SWITCHBOARD_PORT,
 * SWITCHBOARD_METRICS_PORT, LOG_LEVEL, REDIS_URL, SWITCHBOARD_REQUEST_STATE_KEY and
 * SWITCHBOARD_REQUEST_STATE_PREVIOUS_KEYS, SWITCHBOARD_VAULT_KEY and SWITCHBOARD_VAULT_PREVIOUS_KEYS
 * (comma-separated): secrets need not be written in the file. Overrides apply only where the section is
 * a mapping (or absent); a malformed section is left for the schema to report.
 *
 * Returns the paths it wrote (as interpolate names them): their values are the environment's own, never
 * read for ${NAME} again, so a secret with "${" in it is kept whole and pulls in no other variable.
 */
export function applyEnvOverrides(d: Record<string, any>, env: NodeJS.ProcessEnv): Set<string> {
  const written = new Set<string>();
  const set = (section: Record<string, any>, key: string, value: unknown, path: string): void => {
    section[key] = value;
    written.add(path);
  };
  if ((env.SWITCHBOARD_HOST || env.SWITCHBOARD_PORT) && (d.server == null || isPlainObject(d.server))) {
    const server = (d.server ??= {});
    if (env.SWITCHBOARD_HOST) set(server, 'host', env.SWITCHBOARD_HOST, 'server.host');
    if (env.SWITCHBOARD_PORT) set(server, 'port', portOf(env.SWITCHBOARD_PORT), 'server.port');
  }
  // In any case (LOG_LEVEL=DEBUG, as images and platforms often set it for every program): the levels are lower case.
  if (env.LOG_LEVEL && (d.logging == null || isPlainObject(d.logging))) set((d.logging ??= {}), 'level', env.LOG_LEVEL.trim().toLowerCase(), 'logging.level');
  if (env.SWITCHBOARD_METRICS_PORT && (d.metrics == null || isPlainObject(d.metrics))) set((d.metrics ??= {}), 'port', portOf(env.SWITCHBOARD_METRICS_PORT), 'metrics.port');
  if (env.REDIS_URL && (d.store == null || isPlainObject(d.store))) {
    const store = (d.store ??= {});
    if (store.redis == null || isPlainObject(store.redis)) set((store.redis ??= {}), 'url', env.REDIS_URL, 'store.redis.url');
  }
  const vaultKey = env.SWITCHBOARD_VAULT_KEY;
  const vaultPrevious = env.SWITCHBOARD_VAULT_PREVIOUS_KEYS;
  if ((vaultKey || vaultPrevious) && (d.vault == null || isPlainObject(d.vault))) {
    const vault = (d.vault ??= {});
    if (vaultKey) set(vault, 'key', vaultKey, 'vault.key');
    if (vaultPrevious) set(vault, 'previousKeys', keyList(vaultPrevious), 'vault.previousKeys');
  }
  const stateKey = env.SWITCHBOARD_REQUEST_STATE_KEY;
  const previousKeys = env.SWITCHBOARD_REQUEST_STATE_PREVIOUS_KEYS;
  if ((stateKey || previousKeys) && (d.modern == null || isPlainObject(d.modern))) {
    const modern = (d.modern ??= {});
    if (stateKey) set(modern, 'requestStateKey', stateKey, 'modern.requestStateKey');
    if (previousKeys) set(modern, 'requestStatePreviousKeys', keyList(previousKeys), 'modern.requestStatePreviousKeys');
  }
  return written;
}
