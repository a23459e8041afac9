import { formatPath } from './problems.js';

/**
 * ${NAME} (and ${NAME:-default}) in a config string, or $${ for a literal "${" (as docker compose writes
 * it), so that a header or an argument can carry a ${NAME} of its own. The last alternative is a shell
 * form this does not read (${NAME:?message}, ${NAME-default}, ${NAME:+x}, ${NAME:=x}, or a ":-" never
 * closed): it was kept as written, so "${TOKEN:?must be set}" went out as the token itself.
 */
const REFERENCE = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$\{([A-Za-z_][A-Za-z0-9_]*)(:?[-?+=])/g;
/** A string that is one reference and nothing else: it may stand for a number or a boolean (typed-references.ts). */
const WHOLE = /^\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}$/;

export type Path = PropertyKey[];

export interface Interpolated {
  value: unknown;
  /** One per unset variable without default, naming its path. */
  problems: string[];
  /** The paths whose string was exactly one ${NAME} reference. */
  wholeReferences: Path[];
}

/**
 * Replaces ${NAME} (and ${NAME:-default}) in every string of a document; an unset variable without
 * default is a problem. The values at `verbatim` paths (and under them) came from the environment itself
 * and are kept as they are.
 */
export function interpolate(doc: unknown, env: NodeJS.ProcessEnv, verbatim: ReadonlySet<string> = new Set()): Interpolated {
  const out: Interpolated = { value: undefined, problems: [], wholeReferences: [] };
  const walk = (value: unknown, path: Path): unknown => {
    if (verbatim.has(formatPath(path))) return value;
    if (typeof value === 'string') {
      if (WHOLE.test(value)) out.wholeReferences.push(path);
      return value.replace(REFERENCE, (m, name: string | undefined, def: string | undefined, shellName: string | undefined, op: string | undefined) => {
        if (shellName !== undefined) {
          // Named by the variable and the operator only: what follows may be a secret written in the file.
          out.problems.push(`${formatPath(path)}: "\${${shellName}${op}" is a shell form this config does not read: write \${${shellName}} or \${${shellName}:-default} (or $\${ for a literal "\${")`);
          return m;
        }
        if (name === undefined) return m.slice(1); // $${ → ${
        const v = env[name];
        // As in shell: ":-" falls back when the variable is unset or empty.
        if (v !== undefined && (v !== '' || def === undefined)) return v;
        if (def !== undefined) return def;
        out.problems.push(`${formatPath(path)}: environment variable ${name} is not set`);
        return '';
      });
    }
    if (Array.isArray(value)) return value.map((v, i) => walk(v, [...path, i]));
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, [...path, k])]));
    return value;
  };
  out.value = walk(doc, []);
  return out;
}
