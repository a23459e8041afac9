// The modern suite's expected failures: test/conformance/modern-expected-failures.json maps each
// scenario allowed to fail to the reason why. A listed scenario that passes is "stale" and fails the
// run, so the list can only shrink as the gateway learns the 2026-07-28 era; an unlisted failure is
// a regression. (The suite's own --expected-failures YAML also fails on WARNING checks, i.e. on
// SHOULD-level gaps; this list judges FAILURE checks only, like the suite's own exit code.)
import { readFileSync } from 'node:fs';

/** `sharing`: the gateway's sharing mode; `server-<sharing>` lists what fails in that mode alone. */
export function loadExpectedFailures(file, sharing) {
  const json = JSON.parse(readFileSync(file, 'utf8'));
  const server = { ...(json.server ?? {}), ...((sharing && json[`server-${sharing}`]) ?? {}) };
  for (const [name, reason] of Object.entries(server)) {
    if (typeof reason !== 'string' || reason.trim() === '') throw new Error(`${file}: "${name}" needs a reason (a non-empty string)`);
  }
  return new Map(Object.entries(server));
}

/** Compares scenario verdicts (Map name → {failed}) with the expected failures. */
export function judge(scenarios, expected) {
  const verdict = { passed: [], expectedFailures: [], unexpectedFailures: [], stale: [], missing: [] };
  for (const [name, { failed }] of scenarios) {
    if (failed > 0) (expected.has(name) ? verdict.expectedFailures : verdict.unexpectedFailures).push(name);
    else (expected.has(name) ? verdict.stale : verdict.passed).push(name);
  }
  // A listed scenario the suite no longer runs is stale too: the list must name real scenarios.
  for (const name of expected.keys()) if (!scenarios.has(name)) verdict.missing.push(name);
  return verdict;
}
