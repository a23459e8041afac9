import { isAbsolute, resolve } from 'node:path';

/** Variables whose value lists files a program loads as code: the dynamic loader's. */
const FILE_LISTS: Record<string, RegExp> = { LD_PRELOAD: /[:\s]+/, LD_AUDIT: /:/ };

/** Variables whose value lists folders code is searched in (libraries, modules, iconv's converters). */
const FOLDER_LISTS = ['LD_LIBRARY_PATH', 'PYTHONPATH', 'NODE_PATH', 'PERL5LIB', 'RUBYLIB', 'GCONV_PATH'];

/** A server's code named outside its arguments: where it is, and what names it (for the refusal). `dir` is always false: refused when it lies inside a writable path, not when it holds one. */
export interface NamedCode {
  path: string;
  dir: boolean;
  via: string;
}

/** node's options that load a module before the script, and may be given in NODE_OPTIONS. */
const NODE_LOADS = /^(?:-r|--require|--import|--loader|--experimental-loader)$/;

/** A path in a variable's value, or a module specifier that is one (./x, ../x, /x): a bare name (dotenv/config) is node_modules'. */
const pathLike = (v: string): boolean => isAbsolute(v) || v.startsWith('./') || v.startsWith('../');

/** The modules NODE_OPTIONS has node load before the script: `--require x`, `--require=x`, `-r x`, … */
function nodeLoads(options: string): string[] {
  const words = options.split(/\s+/).filter(Boolean);
  const found: string[] = [];
  words.forEach((w, i) => {
    const eq = w.indexOf('=');
    if (eq > 0 && NODE_LOADS.test(w.slice(0, eq))) found.push(w.slice(eq + 1));
    else if (NODE_LOADS.test(w) && words[i + 1] !== undefined) found.push(words[i + 1]!);
  });
  return found.filter(pathLike);
}

/**
 * The code a server's environment names (its declared variables): a file the loader preloads, a folder
 * searched for libraries or modules (python -m server finds its module on PYTHONPATH), a module
 * NODE_OPTIONS requires. Each is the server's code as a script among its arguments is, whether or not
 * it exists yet (the server may write it for its next start); relative ones as seen from `workdir`.
 */
export function envCodePaths(env: Record<string, string>, workdir: string): NamedCode[] {
  const out: NamedCode[] = [];
  const add = (via: string, values: string[]) => {
    for (const v of values) if (v !== '') out.push({ path: resolve(workdir, v), dir: false, via });
  };
  for (const [name, sep] of Object.entries(FILE_LISTS)) if (env[name]) add(name, env[name].split(sep));
  // A folder holding a writable one is not refused: only a module named after that folder would be looked
  // for in it, which the server's own code does not import (unlike node's node_modules under a package).
  for (const name of FOLDER_LISTS) if (env[name]) add(name, env[name].split(':'));
  if (env.NODE_OPTIONS) add('NODE_OPTIONS', nodeLoads(env.NODE_OPTIONS));
  return out;
}
