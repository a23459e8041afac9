// Runs one conformance suite process against a URL, keeps its full output in a log file (the suite
// prints pages per scenario) and reads its verdicts from the `=== SUMMARY ===` block it prints:
// one `✓|✗ <scenario>: N passed, M failed` line per scenario (M counts FAILURE checks only).
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

const LINE = /^([✓✗]) (\S+): (\d+) passed, (\d+) failed/;

/**
 * Scenario verdicts from a suite's output: Map name → { passed, failed } (check counts). A run of one
 * `--scenario` prints no summary block, only `Passed: N/T, M failed, W warnings`.
 */
export function parseSummary(output, single) {
  const at = output.lastIndexOf('=== SUMMARY ===');
  const scenarios = new Map();
  const one = /Passed: (\d+)\/\d+, (\d+) failed/.exec(output);
  if (at === -1 && single && one) scenarios.set(single, { passed: Number(one[1]), failed: Number(one[2]) });
  if (at === -1) return scenarios;
  for (const line of output.slice(at).split('\n')) {
    const m = LINE.exec(line.trim());
    if (m) scenarios.set(m[2], { passed: Number(m[3]), failed: Number(m[4]) });
  }
  return scenarios;
}

/** Spawns `node suite server --url URL ...args` (`single`: the one --scenario run); resolves { code, scenarios, summary }. */
export function runSuite({ node, suite, url, args = [], logFile, cwd, verbose = false, single }) {
  mkdirSync(dirname(logFile), { recursive: true });
  const log = createWriteStream(logFile);
  let output = '';
  return new Promise((resolve) => {
    const child = spawn(node, [suite, 'server', '--url', url, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const take = (chunk) => {
      output += chunk;
      log.write(chunk);
      if (verbose) process.stdout.write(chunk);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('close', (code) => {
      log.end();
      const at = output.lastIndexOf('=== SUMMARY ===');
      resolve({ code: code ?? 1, scenarios: parseSummary(output, single), summary: at === -1 ? output.slice(-2000) : output.slice(at) });
    });
  });
}
