#!/usr/bin/env node
// Finds test files (*.test.ts) under the given folders (default: test/unit, test/integration,
// test/clients) and runs them with node's test runner through tsx. Node 20's runner does not expand
// globs itself.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const roots = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const record = process.argv.includes('--record-durations');
const flags = process.argv.slice(2).filter((a) => a.startsWith('--') && a !== '--record-durations');
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

// Longest first: the runner starts files in the order given, two at a time, so a long file started last
// is run alone while the other slot idles (test/clients, last by path, held several of the longest).
// test/durations.json holds each file's time from a recorded run (`--record-durations` rewrites it);
// a file it does not know yet goes first, since it may be long.
const DURATIONS = 'test/durations.json';
// SWB_TEST_SKIP: comma-separated folders or files left out (.ci/run runs the client matrix on one Node line).
const skipped = (process.env.SWB_TEST_SKIP ?? '').split(',').filter(Boolean);
if (skipped.length > 0) console.log(`leaving out (SWB_TEST_SKIP): ${skipped.join(' ')}`);
const known = existsSync(DURATIONS) ? JSON.parse(readFileSync(DURATIONS, 'utf8')) : {};
const files = dirs
  .flatMap((d) => (d.endsWith('.test.ts') ? [d] : walk(d, [])))
  .map((f) => relative('.', f))
  .filter((f) => !skipped.some((prefix) => f.startsWith(prefix)))
  .sort((a, b) => (known[b] ?? Infinity) - (known[a] ?? Infinity) || (a < b ? -1 : 1));
if (files.length === 0) {
  console.error(`no test files under ${dirs.join(', ')}`);
  process.exit(1);
}
// Suites that put the machine under load on purpose (thousands of sockets against a descriptor limit)
// run alone, after the rest: beside another suite on a 2-core machine their figures say more about the
// neighbour than about the gateway.
const SOLO = new Set(['test/integration/connection-limits.test.ts']);
const shared = files.filter((f) => !SOLO.has(f));
const solo = files.filter((f) => SOLO.has(f));
console.log(`running ${files.length} test files: ${files.join(' ')}`);
const out = join(tmpdir(), `swb-durations-${process.pid}.jsonl`);
const reporters = record
  ? ['--test-reporter=spec', '--test-reporter-destination=stdout', '--test-reporter=./test/helpers/durations-reporter.mjs', '--test-reporter-destination=stdout']
  : [];
// The runner gives each file (a test of its own, in its own process) the default timeout too, so this bounds a
// file's whole run: 180 s cancelled tool-pinning (66 s quiet, its CLI runs compile the CLI each time) on a loaded
// machine, as it did a file in CI (Node 22, "cancelled 1"). The longest file takes ~125 s quiet; tests that can
// hang set their own, shorter timeouts.
const TIMEOUT_MS = 600_000;
const run = (list, concurrency) =>
  list.length === 0
    ? 0
    : (spawnSync(process.execPath, ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, `--test-timeout=${TIMEOUT_MS}`, ...reporters, ...flags, ...list], {
        stdio: 'inherit',
        env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent', SWB_DURATIONS_OUT: out },
      }).status ?? 1);
const first = run(shared, 2);
const second = run(solo, 1);
if (record && existsSync(out)) {
  const measured = Object.fromEntries(readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l)));
  const merged = Object.entries({ ...known, ...measured }).filter(([f]) => existsSync(f)).sort((a, b) => b[1] - a[1]);
  writeFileSync(DURATIONS, `${JSON.stringify(Object.fromEntries(merged), null, 1)}\n`);
  rmSync(out);
  console.log(`wrote ${DURATIONS}: ${Object.keys(measured).length} files measured`);
}
process.exit(first !== 0 ? first : second);
