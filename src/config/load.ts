import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { isScalar, parseAllDocuments } from 'yaml';
import { interpolate } from './interpolate.js';
import { notAGatewayConfig } from './not-a-config.js';
import { describeIssues } from './problems.js';
import { resolveConfigPaths } from './relative-paths.js';
import { configSchema, type Config } from './schema.js';
import { configWarnings } from './warnings.js';
import { isPlainObject } from './plain-object.js';

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(source: string, problems: string[]) {
    super(`invalid configuration in ${source}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

/** A valid config, and what in it is valid but will not work as meant. */
export interface LoadedConfig {
  config: Config;
  warnings: string[];
}

/** Validates a decoded document; every problem names its path. */
export function checkDocument(doc: unknown, source = 'config', env: NodeJS.ProcessEnv = process.env, baseDir = process.cwd()): LoadedConfig {
  const foreign = notAGatewayConfig([doc]);
  if (foreign) throw new ConfigError(source, [foreign]);
  const problems: string[] = [];
  const interpolated = interpolate(doc, env, '', problems);
  if (problems.length > 0) throw new ConfigError(source, problems);
  const result = configSchema.safeParse(interpolated ?? {});
  // Described from the document as written: a value quoted in a problem shows `${VAR}`, not the secret it stands for.
  if (!result.success) throw new ConfigError(source, describeIssues(result.error.issues, configSchema, doc ?? {}));
  const cfg = result.data;
  const paths = resolveConfigPaths(cfg, baseDir);
  return { config: deepFreeze(cfg), warnings: configWarnings(cfg, paths) };
}

/** Validates a decoded document (relative paths against baseDir); every problem names its path. */
export function parseConfig(doc: unknown, source = 'config', env: NodeJS.ProcessEnv = process.env, baseDir = process.cwd()): Config {
  return checkDocument(doc, source, env, baseDir).config;
}

/**
 * Reads, interpolates and validates a YAML config file. Overrides from the environment: SWITCHBOARD_HOST,
 * SWITCHBOARD_PORT, SWITCHBOARD_METRICS_PORT, LOG_LEVEL, REDIS_URL, SWITCHBOARD_REQUEST_STATE_KEY and
 * SWITCHBOARD_REQUEST_STATE_PREVIOUS_KEYS, SWITCHBOARD_VAULT_KEY and SWITCHBOARD_VAULT_PREVIOUS_KEYS (comma-separated): secrets need not be written in the file.
 */
export function readConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(file, [`cannot read the file: ${(err as Error).message}`]);
  }
  const doc = decodeYaml(file, text);
  if (doc !== null && typeof doc === 'object' && !Array.isArray(doc)) {
    const d = doc as Record<string, any>;
    // Overrides apply only where the section is a mapping (or absent); a malformed section is left for the schema to report.
    if ((env.SWITCHBOARD_HOST || env.SWITCHBOARD_PORT) && (d.server == null || isPlainObject(d.server))) {
      const server = (d.server ??= {});
      if (env.SWITCHBOARD_HOST) server.host = env.SWITCHBOARD_HOST;
      if (env.SWITCHBOARD_PORT) server.port = Number(env.SWITCHBOARD_PORT);
    }
    if (env.LOG_LEVEL && (d.logging == null || isPlainObject(d.logging))) (d.logging ??= {}).level = env.LOG_LEVEL;
    if (env.SWITCHBOARD_METRICS_PORT && (d.metrics == null || isPlainObject(d.metrics))) (d.metrics ??= {}).port = Number(env.SWITCHBOARD_METRICS_PORT);
    if (env.REDIS_URL && (d.store == null || isPlainObject(d.store))) {
      const store = (d.store ??= {});
      if (store.redis == null || isPlainObject(store.redis)) (store.redis ??= {}).url = env.REDIS_URL;
    }
    const vaultKey = env.SWITCHBOARD_VAULT_KEY;
    const vaultPrevious = env.SWITCHBOARD_VAULT_PREVIOUS_KEYS;
    if ((vaultKey || vaultPrevious) && (d.vault == null || isPlainObject(d.vault))) {
      const vault = (d.vault ??= {});
      if (vaultKey) vault.key = vaultKey;
      if (vaultPrevious) vault.previousKeys = vaultPrevious.split(',').map((k) => k.trim()).filter(Boolean);
    }
    const stateKey = env.SWITCHBOARD_REQUEST_STATE_KEY;
    const previousKeys = env.SWITCHBOARD_REQUEST_STATE_PREVIOUS_KEYS;
    if ((stateKey || previousKeys) && (d.modern == null || isPlainObject(d.modern))) {
      const modern = (d.modern ??= {});
      if (stateKey) modern.requestStateKey = stateKey;
      if (previousKeys) modern.requestStatePreviousKeys = previousKeys.split(',').map((k) => k.trim()).filter(Boolean);
    }
  }
  return checkDocument(doc, file, env, dirname(resolve(file)));
}

/** The config of a file, its warnings aside (commands that only need what it says). */
export function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): Config {
  return readConfigFile(file, env).config;
}

/** The file's one YAML document; several (a Kubernetes manifest) are refused saying what the file is. */
function decodeYaml(file: string, text: string): unknown {
  const docs = parseAllDocuments(text, { prettyErrors: true });
  const broken = docs.find((d) => d.errors.length > 0);
  if (broken) throw new ConfigError(file, [`not valid YAML: ${broken.errors[0]!.message}`]);
  // An empty document (a "---" with nothing after it but comments, as editors and generators leave at the
  // end of a file) is no second document: counting it refused a valid config as "2 YAML documents".
  const written = docs.filter((d) => !(d.contents === null || (isScalar(d.contents) && d.contents.type === 'PLAIN' && d.contents.source === '')));
  const values: unknown[] = (written.length > 0 ? written : docs.slice(0, 1)).map((d) => d.toJS());
  // Before the environment overrides add sections of their own to whatever the file is.
  const foreign = notAGatewayConfig(values);
  if (foreign) throw new ConfigError(file, [foreign]);
  return values[0] ?? null;
}
