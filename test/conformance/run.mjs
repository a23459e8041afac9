#!/usr/bin/env node
// `npm run conformance`: the official conformance suites against the gateway fronting
// test/fixtures/conformance-server.mjs over stdio (test/conformance/gateway.yaml).
//   legacy  @modelcontextprotocol/conformance 0.1.13 (2025-era wire), once per sharing mode (this Node)
//   modern  0.2.0-alpha.12 (npm alias conformance-modern), `--requirements 2026-07-28` (Node 22+:
//           this one, or one installed once into .cache/node22), judged against modern-expected-failures.json
// Env: CONFORMANCE_MODERN=0 skips the modern suite, CONFORMANCE_LEGACY=0 the legacy ones;
// CONFORMANCE_MODERN_SCENARIO=name runs one modern scenario; CONFORMANCE_MODERN_SHARING (default both:
// shared and per-session) picks one sharing mode; CONFORMANCE_VERBOSE=1 streams the suites' output.
// Full output and checks.json files land in .cache/conformance/. Extra argv goes to the legacy suite.
// Exits non-zero when a legacy scenario fails, a modern scenario fails that is not listed, or a
// listed one passes (stale entry).
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { judge, loadExpectedFailures } from './expected-failures.mjs';
import { nodeAtLeast } from '../helpers/node-binary.mjs';
import { runSuite } from './suite-run.mjs';

/** Check-level totals of a run (the suite's own `Total: N passed, M failed` line). */
const checkTotals = (scenarios) => [...scenarios.values()].reduce((t, s) => ({ passed: t.passed + s.passed, failed: t.failed + s.failed }), { passed: 0, failed: 0 });

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const out = join(root, '.cache', 'conformance');
const require = createRequire(import.meta.url);
const suiteOf = (pkg) => join(dirname(require.resolve(`${pkg}/package.json`)), 'dist', 'index.js');
const env = process.env;
const verbose = env.CONFORMANCE_VERBOSE === '1';

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

async function waitReady(url, deadline) {
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gateway not ready at ${url}`);
}

/** Starts the gateway in one sharing mode, runs fn(mcpUrl), stops the gateway. */
async function withGateway(sharing, fn) {
  const port = await freePort();
  const gw = spawn(process.execPath, ['--import', 'tsx', join(root, 'src', 'main.ts'), 'serve', '--config', join(here, 'gateway.yaml')], {
    cwd: root,
    env: { ...env, SWITCHBOARD_PORT: String(port), CONFORMANCE_SHARING: sharing, LOG_LEVEL: env.LOG_LEVEL ?? 'warn' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  try {
    await waitReady(`http://127.0.0.1:${port}/readyz`, Date.now() + 30_000);
    return await fn(`http://127.0.0.1:${port}/mcp`);
  } finally {
    gw.kill('SIGTERM');
    await new Promise((r) => gw.once('exit', r));
  }
}

async function legacy(sharing) {
  const logFile = join(out, `legacy-${sharing}.log`);
  const run = await withGateway(sharing, (url) =>
    runSuite({ node: process.execPath, suite: suiteOf('@modelcontextprotocol/conformance'), url, args: process.argv.slice(2), logFile, cwd: root, verbose }),
  );
  const failing = [...run.scenarios].filter(([, s]) => s.failed > 0).map(([n]) => n);
  const ok = run.code === 0 && run.scenarios.size > 0;
  return { label: `legacy (${sharing})`, logFile, ok, passed: run.scenarios.size - failing.length, failed: failing.length, skipped: 0, checks: checkTotals(run.scenarios), notes: failing.map((n) => `failed: ${n}`), summary: run.summary };
}

async function modern(sharing) {
  const node = nodeAtLeast(22, root);
  const logFile = join(out, `modern-${sharing}.log`);
  const results = join(out, 'modern-results');
  rmSync(results, { recursive: true, force: true });
  const one = env.CONFORMANCE_MODERN_SCENARIO;
  const args = one ? ['--scenario', one, '--spec-version', '2026-07-28'] : ['--requirements', '2026-07-28'];
  const run = await withGateway(sharing, (url) =>
    runSuite({ node, suite: suiteOf('@modelcontextprotocol/conformance-modern'), url, args: [...args, '-o', results], logFile, cwd: root, verbose, single: one }),
  );
  const expectedFile = join(here, 'modern-expected-failures.json');
  const expected = loadExpectedFailures(expectedFile, sharing);
  const v = judge(run.scenarios, one ? new Map([...expected].filter(([n]) => n === one)) : expected);
  const missing = one ? [] : v.missing;
  const listFile = relative(root, expectedFile);
  const notes = [
    ...v.unexpectedFailures.map((n) => `unexpected failure (fix it, or list it in ${listFile} with a reason): ${n}`),
    ...v.stale.map((n) => `stale: passes now, remove it from ${listFile}: ${n}`),
    ...missing.map((n) => `listed in ${listFile} but not run by the suite: ${n}`),
  ];
  const ok = run.scenarios.size > 0 && notes.length === 0;
  const failed = v.unexpectedFailures.length + v.stale.length + missing.length;
  return { label: `modern (${sharing}, 2026-07-28)`, logFile, ok, passed: v.passed.length, failed, skipped: v.expectedFailures.length, checks: checkTotals(run.scenarios), notes, summary: run.summary };
}

const runs = [];
if (env.CONFORMANCE_LEGACY !== '0') for (const mode of ['shared', 'per-session']) runs.push(await legacy(mode));
// Both sharing modes, as for the legacy suites: a modern principal's per-session instance differs from a shared one.
if (env.CONFORMANCE_MODERN !== '0') for (const sharing of env.CONFORMANCE_MODERN_SHARING ? [env.CONFORMANCE_MODERN_SHARING] : ['shared', 'per-session']) runs.push(await modern(sharing));

console.log('\n=== conformance ===');
for (const r of runs) {
  if (!r.ok && r.passed + r.failed + r.skipped === 0) console.log(r.summary);
  const expected = r.skipped > 0 ? `, ${r.skipped} expected failures` : '';
  const checks = `checks ${r.checks.passed}/${r.checks.passed + r.checks.failed}`;
  console.log(`${r.ok ? '✓' : '✗'} ${r.label}: ${r.passed} scenarios passed, ${r.failed} failed${expected}; ${checks} (log: ${relative(root, r.logFile)})`);
  for (const n of r.notes) console.log(`    ${n}`);
}
const sum = (k) => runs.reduce((a, r) => a + r[k], 0);
// One plain closing line; "skipped" counts the modern suite's listed (expected) failures.
console.log(`conformance: ${sum('passed')} passed, ${sum('failed')} failed, ${sum('skipped')} skipped`);
process.exit(runs.every((r) => r.ok) ? 0 : 1);
