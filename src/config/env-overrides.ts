import { isPlainObject } from './plain-object.js';

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
    if (env.SWITCHBOARD_PORT) set(server, 'port', Number(env.SWITCHBOARD_PORT), 'server.port');
  }
  if (env.LOG_LEVEL && (d.logging == null || isPlainObject(d.logging))) set((d.logging ??= {}), 'level', env.LOG_LEVEL, 'logging.level');
  if (env.SWITCHBOARD_METRICS_PORT && (d.metrics == null || isPlainObject(d.metrics))) set((d.metrics ??= {}), 'port', Number(env.SWITCHBOARD_METRICS_PORT), 'metrics.port');
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
