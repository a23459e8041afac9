// Hidden-text patterns are matched as one expression: each endpoint's (or tenant's) list joined, and every
// pattern configured anywhere joined for pin reviews. Two that each compile can fail together (the same
// named group twice): check-config passed such a file, and then serve crashed at start (or a reload failed
// partway). check-config and serve now both refuse it with the pattern's path (found by a review).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';

const ROOT = resolve(import.meta.dirname, '..', '..');
const CLI = ['--import', 'tsx', join(ROOT, 'src', 'main.ts')];
const FIXTURE = join(ROOT, 'test', 'fixtures', 'conformance-server.mjs');
const dir = mkdtempSync(join(tmpdir(), 'swb-joined-patterns-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[]) {
  return spawnSync(process.execPath, [...CLI, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, SWITCHBOARD_PORT: '0', SWITCHBOARD_METRICS_PORT: '0' }, timeout: 30_000 });
}

function configFile(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, `server: { host: 127.0.0.1, port: 0 }\nmetrics: { enabled: false }\nupstreams: [{ name: a, transport: stdio, sandbox: none, command: node, args: [${JSON.stringify(FIXTURE)}] }]\n${text}`);
  return file;
}

/** check-config and serve on the file: both exit 1 naming `path` and the joined expression's error. */
function refusedByBoth(file: string, path: string): void {
  for (const [what, r] of [['check-config', run(['check-config', file])], ['serve', run(['serve', '--config', file])]] as const) {
    assert.equal(r.status, 1, `${what} exited ${r.status}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, /^switchboard: invalid configuration in /, `${what}: ${r.stderr}`);
    const line = r.stderr.split('\n').find((l) => l.startsWith(`  - ${path}: `));
    assert.ok(line, `${what} names no problem at ${path}: ${r.stderr}`);
    assert.match(line, /together.*Duplicate capture group name/, `${what}: ${line}`);
    assert.doesNotMatch(r.stderr, /^\s+at /m, `${what} printed a stack trace`);
  }
}

// Node 24's V8 takes one group name in two alternatives (ES2025 duplicate named groups), and the patterns
// are joined as alternatives: there the joined set compiles, nothing crashes, and nothing is refused.
const joinedDuplicatesCompile = (() => {
  try {
    new RegExp('(?:(?<w>a))|(?:(?<w>b))', 'iu');
    return true;
  } catch {
    return false;
  }
})();
const skip = joinedDuplicatesCompile ? `Node.js ${process.version} compiles a group name repeated in two alternatives: the joined patterns are valid here` : false;

describe('hidden-text patterns that fail only when joined (found by a review)', { skip }, () => {
  it("one endpoint's two patterns with the same named group: check-config and serve refuse the second", () => {
    const file = configFile(
      'one-list.yaml',
      `endpoints:\n  - path: /mcp\n    upstreams: [a]\n    guardrails: { hiddenText: { results: audit, patterns: ["(?<w>ignore) previous", "(?<w>disregard) above"] } }\n`,
    );
    refusedByBoth(file, 'endpoints[0].guardrails.hiddenText.patterns[1]');
  });

  it("an endpoint's and a tenant's pattern, each alone in its list, with the same named group: refused where they meet (the pin review's set)", () => {
    const file = configFile(
      'two-lists.yaml',
      `tenants: [{ name: anonymous, endpoints: ["*"], guardrails: { hiddenText: { patterns: ["(?<w>disregard) above"] } } }]\n` +
        `endpoints:\n  - path: /mcp\n    upstreams: [a]\n    guardrails: { hiddenText: { results: audit, patterns: ["(?<w>ignore) previous"] } }\n`,
    );
    refusedByBoth(file, 'tenants[0].guardrails.hiddenText.patterns[0]');
  });
});
