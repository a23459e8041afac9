/**
 * ${NAME} (and ${NAME:-default}) in a config string, or $${ for a literal "${" (as docker compose writes
 * it), so that a header or an argument can carry a ${NAME} of its own.
 */
const REFERENCE = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Replaces ${NAME} (and ${NAME:-default}) in every string; an unset variable without default is an error.
 * The values at `verbatim` paths (and under them) came from the environment itself and are kept as they are.
 */
export function interpolate(value: unknown, env: NodeJS.ProcessEnv, path: string, problems: string[], verbatim: ReadonlySet<string> = new Set()): unknown {
  if (verbatim.has(path)) return value;
  if (typeof value === 'string') {
    return value.replace(REFERENCE, (m, name: string | undefined, def: string | undefined) => {
      if (name === undefined) return m.slice(1); // $${ → ${
      const v = env[name];
      // As in shell: ":-" falls back when the variable is unset or empty.
      if (v !== undefined && (v !== '' || def === undefined)) return v;
      if (def !== undefined) return def;
      problems.push(`${path || '(root)'}: environment variable ${name} is not set`);
      return '';
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolate(v, env, `${path}[${i}]`, problems, verbatim));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env, path ? `${path}.${k}` : k, problems, verbatim)]));
  }
  return value;
}
