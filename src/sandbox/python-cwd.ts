import { basename } from 'node:path';
import type { NamedCode } from './env-code-paths.js';

const PYTHON = /^(python[0-9.]*|pypy[0-9.]*)$/;

/**
 * The working directory when a python server's imports search it first: `-m module` and `-c code` put it
 * at the head of sys.path (a script puts its own folder there instead), unless `-P`, `-I` or
 * PYTHONSAFEPATH keep it off. A module left there (server.py, or json.py shadowing the standard library)
 * is then the server's code. `programs`: the command as configured and where it leads.
 */
export function pythonCwdCode(programs: string[], args: readonly string[], env: Record<string, string>, workdir: string): NamedCode[] {
  if (!programs.some((p) => PYTHON.test(basename(p))) || env.PYTHONSAFEPATH) return [];
  const end = args.findIndex((a) => !a.startsWith('-'));
  const options = end < 0 ? args : args.slice(0, end);
  if (options.some((o) => o === '-P' || o === '-I')) return [];
  return options.some((o) => o === '-m' || o === '-c') ? [{ path: workdir, dir: false, via: 'its working directory, on sys.path' }] : [];
}
