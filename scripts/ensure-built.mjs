#!/usr/bin/env node
// Builds dist/ with tsc only when it is not current: the last build succeeded (a stamp in .cache/,
// dated when that build started), no src/**/*.ts nor tsconfig file changed since, and every source has
// its dist/**/*.js. A current dist/ costs a directory walk (milliseconds) instead of a TypeScript build
// (10-30 s), so `npm start` and `npm run token` start at once after the first time. A failed build
// (a type error: tsc still writes JavaScript) removes the stamp, so the next start tries again rather
// than run what did not type-check. --clean removes dist/ and always builds (prepack: no file of a
// deleted source can reach the package). Progress and compiler output go to stderr:
// `npm run --silent token` prints only the token.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'src');
const DIST = join(ROOT, 'dist');
const CONFIGS = ['tsconfig.json', 'tsconfig.build.json'].map((f) => join(ROOT, f));
const STAMP = join(ROOT, '.cache', 'dist-built');

function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

const mtime = (p) => {
  try {
    return statSync(p).mtimeMs;
  } catch {
    return undefined;
  }
};

/** Why dist/ must be built, or undefined when it is current. */
function staleness() {
  const built = mtime(STAMP);
  if (built === undefined) return 'no successful build yet';
  if (CONFIGS.some((c) => (mtime(c) ?? 0) > built)) return 'a tsconfig file changed since the last build';
  for (const src of sources(SRC)) {
    const out = join(DIST, relative(SRC, src)).replace(/\.ts$/, '.js');
    if (mtime(out) === undefined) return `${relative(ROOT, out)} is missing`;
    if (mtime(src) > built) return `${relative(ROOT, src)} changed since the last build`;
  }
  return undefined;
}

const clean = process.argv.includes('--clean');
const why = clean ? 'clean build' : staleness();
if (why !== undefined) {
  if (clean) rmSync(DIST, { recursive: true, force: true });
  rmSync(STAMP, { force: true });
  process.stderr.write(`building dist/ (${why})\n`);
  // Sources saved while tsc runs are newer than the stamp: the next start builds them.
  const started = new Date();
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: ['ignore', 2, 2] });
  if (r.status !== 0) process.exit(r.status ?? 1);
  mkdirSync(dirname(STAMP), { recursive: true });
  writeFileSync(STAMP, `${started.toISOString()}\n`);
  utimesSync(STAMP, started, started);
}
