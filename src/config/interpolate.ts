/**
 * ${NAME} (and ${NAME:-default}) in a config string, or $${ for a literal "${" (as docker compose writes
 * it), so that a header or an argument can carry a ${NAME} of its own.
 */
const REFERENCE = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Replaces ${NAME} (and ${NAME:-default}) in every string; an unset variable without default is an error. */
export function interpolate(value: unknown, env: NodeJS.ProcessEnv, path: string, problems: string[]): unknown {
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
  if (Array.isArray(value)) return value.map((v, i) => interpolate(v, env, `${path}[${i}]`, problems));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env, path ? `${path}.${k}` : k, problems)]));
  }
  return value;
}
