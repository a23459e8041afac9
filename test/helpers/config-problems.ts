import assert from 'node:assert/strict';
import { ConfigError, parseConfig } from '../../src/config/load.js';

export const MINIMAL_CONFIG = { upstreams: [{ name: 'a', transport: 'stdio', command: 'node', sandbox: 'none' }], endpoints: [{ path: '/mcp', upstreams: ['a'] }] };

/** Every problem the loader finds when tenant "t" carries `rules` under `key` (fails the test when it accepts them). */
export function tenantRuleProblems(key: string, rules: unknown[]): string[] {
  try {
    parseConfig({ ...MINIMAL_CONFIG, tenants: [{ name: 't', endpoints: ['*'], [key]: rules }] }, 'test', {});
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.problems;
  }
  assert.fail('accepted');
}

/** Asserts that one of `list` is a problem at `path` mentioning `fragment`. */
export function hasProblem(list: string[], path: string, fragment: string): void {
  assert.ok(list.some((p) => p.startsWith(`${path}: `) && p.includes(fragment)), `no "${fragment}" at ${path} in ${JSON.stringify(list)}`);
}
