#!/usr/bin/env node
// Finds test files (*.test.ts) under the given folders (default: test/unit, test/integration,
// test/clients) and runs them with node's test runner through tsx. Node 20's runner does not expand
// globs itself.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const roots = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const flags = process.argv.slice(2).filter((a) => a.startsWith('--'));
const dirs = roots.length > 0 ? roots : ['test/unit', 'test/integration', 'test/clients'];

function walk(dir, out) {
  let entries = [];
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const e of entries.sort()) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (p.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const files = dirs.flatMap((d) => (d.endsWith('.test.ts') ? [d] : walk(d, [])));
if (files.length === 0) {
  console.error(`no test files under ${dirs.join(', ')}`);
  process.exit(1);
}
// Suites that put the machine under load on purpose (thousands of sockets against a descriptor limit)
// run alone, after the rest: beside another suite on a 2-core machine their figures say more about the
// neighbour than about the gateway.
const SOLO = new Set(['test/integration/connection-limits.test.ts']);
const shared = files.filter((f) => !SOLO.has(relative('.', f)));
const solo = files.filter((f) => SOLO.has(relative('.', f)));
console.log(`running ${files.length} test files: ${files.map((f) => relative('.', f)).join(' ')}`);
const run = (list, concurrency) =>
  list.length === 0
    ? 0
    : (spawnSync(process.execPath, ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-timeout=180000', ...flags, ...list], {
        stdio: 'inherit',
        env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' },
      }).status ?? 1);
const first = run(shared, 2);
const second = run(solo, 1);
process.exit(first !== 0 ? first : second);
