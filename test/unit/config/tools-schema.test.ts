// The endpoint's `tools:` section: defaults, and every cross-field rule named by its path.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, parseConfig } from '../../../src/config/load.js';

const up = (name: string) => ({ name, transport: 'stdio', command: 'node' });

function problems(tools: Record<string, unknown>, o: { upstreams?: string[]; tenants?: unknown[] } = {}): string[] {
  const names = o.upstreams ?? ['gh', 'fs'];
  try {
    parseConfig({ upstreams: names.map(up), endpoints: [{ path: '/mcp', upstreams: names, tools }], ...(o.tenants ? { tenants: o.tenants } : {}) }, 'test.yaml', {});
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.problems;
  }
  return [];
}

describe('endpoint tools config', () => {
  it('accepts exposure, curation and a per-tenant layer', () => {
    assert.deepEqual(problems({ exposure: 'search', include: ['gh__*'], exclude: ['gh__delete_*'], overrides: { gh__create_issue: { name: 'new_issue', title: 'New issue' } }, tenants: { anonymous: { exclude: ['fs__*'] } } }), []);
  });

  it('names each bad field by its path', () => {
    assert.deepEqual(problems({ exposure: 'everything' }), ['endpoints[0].tools.exposure: Invalid option: expected one of "all"|"search"|"search+working-set"']);
    assert.match(problems({ maxToolNameLength: 20 })[0]!, /^endpoints\[0\]\.tools\.maxToolNameLength: /);
    assert.deepEqual(problems({ tenants: { nobody: {} } }), ['endpoints[0].tools.tenants.nobody: no tenant is named "nobody"']);
    assert.deepEqual(problems({ overrides: { gh__a: { name: 'has space' } } }), ['endpoints[0].tools.overrides.gh__a.name: 1-128 of [A-Za-z0-9_.-] (the MCP tool name rule)']);
  });

  it('refuses renames that clash, look like another upstream’s name, take a meta-tool name or do not fit', () => {
    assert.deepEqual(problems({ overrides: { gh__a: { name: 'x' }, fs__b: { name: 'x' } } }), ['endpoints[0].tools.overrides.fs__b.name: "x" is also the new name of "gh__a"']);
    assert.deepEqual(problems({ overrides: { gh__a: { name: 'fs__a' } } }), ['endpoints[0].tools.overrides.gh__a.name: "fs__a" reads as a name of upstream "fs": choose a name that does not start with "fs__"']);
    assert.deepEqual(problems({ overrides: { gh__a: { name: 'call_tool' } } }), ['endpoints[0].tools.overrides.gh__a.name: "call_tool" is the name of a search meta-tool']);
    assert.deepEqual(problems({ maxToolNameLength: 32, overrides: { gh__a: { name: 'x'.repeat(40) } } }), [`endpoints[0].tools.overrides.gh__a.name: "${'x'.repeat(40)}" is longer than maxToolNameLength (32)`]);
    assert.deepEqual(problems({ overrides: { gh__a: { name: 'x' } }, tenants: { anonymous: { overrides: { fs__b: { name: 'x' } } } } }), ['endpoints[0].tools.tenants.anonymous.overrides.fs__b.name: "x" is also the new name of "gh__a"']);
  });

  it('refuses a limit that leaves a long upstream name no room for a shortened name', () => {
    const long = 'a'.repeat(20);
    assert.deepEqual(problems({ maxToolNameLength: 32 }, { upstreams: [long, 'fs'] }), [`endpoints[0].tools.maxToolNameLength: 32 leaves no room for a shortened name of upstream "${long}" (needs at least 34)`]);
  });

  it('refuses a prefixed pattern or override on an endpoint that shows its one upstream unprefixed: it would match no tool (found by a review)', () => {
    // Curation matches the names the endpoint gives (here the upstream's own, delete_repository): an exclude
    // written gh__delete_* (as for an endpoint of several upstreams, or left from one) excluded nothing.
    const tools = { exclude: ['gh__delete_*', 'admin_*'], include: ['gh__*'], overrides: { gh__create_issue: { name: 'new_issue' } }, tenants: { anonymous: { exclude: ['gh__merge_*'] } } };
    assert.deepEqual(problems(tools, { upstreams: ['gh'] }), [
      'endpoints[0].tools.include[0]: "gh__*" can match no tool: this endpoint shows upstream "gh" unprefixed, so the names curation matches are the upstream\'s own; write it without "gh__"',
      'endpoints[0].tools.exclude[0]: "gh__delete_*" can match no tool: this endpoint shows upstream "gh" unprefixed, so the names curation matches are the upstream\'s own; write it without "gh__"',
      'endpoints[0].tools.overrides.gh__create_issue: "gh__create_issue" can match no tool: this endpoint shows upstream "gh" unprefixed, so the names curation matches are the upstream\'s own; write it without "gh__"',
      'endpoints[0].tools.tenants.anonymous.exclude[0]: "gh__merge_*" can match no tool: this endpoint shows upstream "gh" unprefixed, so the names curation matches are the upstream\'s own; write it without "gh__"',
    ]);
    // The same section is right where the endpoint prefixes, and bare names are right unprefixed.
    assert.deepEqual(problems(tools, { upstreams: ['gh', 'fs'], tenants: [{ name: 'anonymous', endpoints: ['*'] }] }), []);
    assert.deepEqual(problems({ exclude: ['delete_*', '*__x'], overrides: { create_issue: { name: 'new_issue' } } }, { upstreams: ['gh'] }), []);
  });
});
