import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { isScalar, parseAllDocuments } from 'yaml';
import { applyEnvOverrides, overrideSource } from './env-overrides.js';
import { interpolate } from './interpolate.js';
import { notAGatewayConfig } from './not-a-config.js';
import { describeIssues } from './problems.js';
import { resolveConfigPaths } from './relative-paths.js';
import { sandboxGatewayFiles } from './sandbox-gateway-files.js';
import { configSchema, type Config } from './schema.js';
import { recordSource } from './source-digest.js';
import { typeReferences } from './typed-references.js';
import { configWarnings } from './warnings.js';

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

/** Validates a decoded document; every problem names its path. `configFile`: the file it was read from. */
export function checkDocument(doc: unknown, source = 'config', env: NodeJS.ProcessEnv = process.env, baseDir = process.cwd(), fromEnv: ReadonlySet<string> = new Set(), configFile?: string): LoadedConfig {
  const foreign = notAGatewayConfig([doc]);
  if (foreign) throw new ConfigError(source, [foreign]);
  const interpolated = interpolate(doc, env, fromEnv);
  if (interpolated.problems.length > 0) throw new ConfigError(source, interpolated.problems);
  const typeProblems = typeReferences(interpolated.value, interpolated.wholeReferences, configSchema, doc);
  if (typeProblems.length > 0) throw new ConfigError(source, typeProblems);
  const result = configSchema.safeParse(interpolated.value ?? {});
  // Described from the document as written: a value quoted in a problem shows `${VAR}`, not the secret it stands for.
  if (!result.success) throw new ConfigError(source, describeIssues(result.error.issues, configSchema, doc ?? {}).map((p) => overrideSource(p, fromEnv)));
  const cfg = result.data;
  const paths = resolveConfigPaths(cfg, baseDir);
  const exposed = sandboxGatewayFiles(cfg, configFile);
  if (exposed.problems.length > 0) throw new ConfigError(source, exposed.problems);
  return { config: deepFreeze(cfg), warnings: [...configWarnings(cfg, paths), ...exposed.warnings] };
}

/** Validates a decoded document (relative paths against baseDir); every problem names its path. */
export function parseConfig(doc: unknown, source = 'config', env: NodeJS.ProcessEnv = process.env, baseDir = process.cwd()): Config {
  return checkDocument(doc, source, env, baseDir).config;
}

/** Reads, interpolates and validates a YAML config file, with the environment's overrides (env-overrides.ts). */
export function readConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    throw new ConfigError(file, [`cannot read the file: ${(err as Error).message}`]);
  }
  const doc = decodeYaml(file, bytes.toString('utf8'));
  const fromEnv = doc !== null && typeof doc === 'object' && !Array.isArray(doc) ? applyEnvOverrides(doc as Record<string, any>, env) : new Set<string>();
  const loaded = checkDocument(doc, file, env, dirname(resolve(file)), fromEnv, resolve(file));
  // The file watch compares the file with this: an edit made before it started is a change too.
  recordSource(loaded.config, bytes);
  return loaded;
}

/** The config of a file, its warnings aside (commands that only need what it says). */
export function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): Config {
  return readConfigFile(file, env).config;
}

/** The file's one YAML document; several (a Kubernetes manifest) are refused saying what the file is. */
function decodeYaml(file: string, text: string): unknown {
  // merge: `<<: *anchor` as compose files, Kubernetes manifests and most YAML tools read it (YAML 1.1);
  // without it the key "<<" was a key like any other, and the settings it brings were reported missing.
  const docs = parseAllDocuments(text, { prettyErrors: true, merge: true });
  const broken = docs.find((d) => d.errors.length > 0);
  // Where, not what: the pretty message goes on with the text of the line, which may hold a secret
  // written there (a token, a password), and problems reach the log, the reload answer and the console.
  if (broken) throw new ConfigError(file, [`not valid YAML: ${broken.errors[0]!.message.split('\n')[0]!.replace(/:$/, '')}`]);
  // An empty document (a "---" with nothing after it but comments, as editors and generators leave at the
  // end of a file) is no second document: counting it refused a valid config as "2 YAML documents".
  const written = docs.filter((d) => !(d.contents === null || (isScalar(d.contents) && d.contents.type === 'PLAIN' && d.contents.source === '')));
  let values: unknown[];
  try {
    values = (written.length > 0 ? written : docs.slice(0, 1)).map((d) => d.toJS());
  } catch (err) {
    // Aliases that expand past the parser's bound (a "billion laughs" file): a problem like any other, not a stack trace.
    throw new ConfigError(file, [`not valid YAML: ${(err as Error).message}`]);
  }
  // Before the environment overrides add sections of their own to whatever the file is.
  const foreign = notAGatewayConfig(values);
  if (foreign) throw new ConfigError(file, [foreign]);
  return values[0] ?? null;
}
