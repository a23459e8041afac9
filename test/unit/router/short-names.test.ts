// Names that fit: shortened names are deterministic (the same input gives the same names in any order,
// in any process), keep their upstream prefix, fit the limit, and never collide, even when a natural
// name of exactly the limit equals a shortened one or two hashes agree on their first digits.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { isValidToolName, splitPrefixed } from '../../../src/jsonrpc/names.js';
import { assignNames, shortName, type NameRequest } from '../../../src/router/short-names.js';

const req = (canonical: string, rename?: string): NameRequest => ({ canonical, rename, keep: canonical.indexOf('__') + 3 });
const long = (upstream: string, tail: string) => `${upstream}__create_pull_request_review_comment_reply_in_thread_of_a_repository_${tail}`;

describe('shortened tool names', () => {
  it('are a readable stem and 10 hex digits of the SHA-256 of the full name, exactly max long', () => {
    const full = long('github', 'for_enterprise_server');
    const s = shortName(full, 64);
    assert.equal(s.length, 64);
    assert.ok(isValidToolName(s));
    assert.equal(s.slice(-10), createHash('sha256').update(full).digest('hex').slice(0, 10));
    assert.ok(full.startsWith(s.slice(0, 53)), 'the stem is the start of the full name');
    assert.equal(splitPrefixed(s)?.upstream, 'github', 'the upstream prefix survives');
  });

  it('are the same in another process (nothing depends on the process)', () => {
    const full = long('github', 'x');
    const script = `import { shortName } from './src/router/short-names.ts'; process.stdout.write(shortName(${JSON.stringify(full)}, 64));`;
    const other = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(other.status, 0, other.stderr);
    assert.equal(other.stdout, shortName(full, 64));
  });

  it('leave names that fit as they are, and shorten only the longer ones', () => {
    const fits = `gh__${'a'.repeat(60)}`; // 64
    const { names } = assignNames([req(fits), req(long('gh', 'one'))], 64);
    assert.equal(names.get(fits), fits);
    assert.equal(names.get(long('gh', 'one'))!.length, 64);
  });

  it('do not depend on the order the tools were listed in', () => {
    const requests = ['one', 'two', 'three', 'four'].map((t) => req(long('gh', t)));
    const a = assignNames(requests, 64).names;
    const b = assignNames([...requests].reverse(), 64).names;
    assert.deepEqual([...a].sort(), [...b].sort());
  });

  it('never collide with a natural name of exactly the limit: the shortened one takes more hash digits', () => {
    const full = long('gh', 'clash');
    const natural = shortName(full, 64); // a tool whose own name is exactly what the short name would be
    assert.equal(natural.length, 64);
    const { names, shadowed } = assignNames([req(full), req(natural)], 64);
    assert.deepEqual(shadowed, []);
    assert.equal(names.get(natural), natural, 'the name that fits keeps it');
    const moved = names.get(full)!;
    assert.notEqual(moved, natural);
    assert.equal(moved.length, 64);
    assert.equal(moved.slice(-14), createHash('sha256').update(full).digest('hex').slice(0, 14));
  });

  it('never collide even when every longer hash is taken too: a counter decides, still deterministically', () => {
    const full = long('gh', 'stubborn');
    // Every longer hash the assignment would try (as long as the stem keeps "gh__" and one more character).
    const taken = Array.from({ length: 13 }, (_, i) => shortName(full, 64, 10 + 4 * i));
    const requests = [req(full), ...taken.map((n) => req(n))];
    const first = assignNames(requests, 64);
    const exposed = [...first.names.values()];
    assert.equal(new Set(exposed).size, exposed.length, 'every exposed name is unique');
    assert.ok(!taken.includes(first.names.get(full)!));
    assert.ok(splitPrefixed(first.names.get(full)!)?.upstream === 'gh');
    assert.deepEqual(assignNames([...requests].reverse(), 64).names, first.names);
  });

  it('never collide over many long names that share their first 60 characters', () => {
    const requests = Array.from({ length: 2000 }, (_, i) => req(`up__${'x'.repeat(60)}_${i}`));
    const { names } = assignNames(requests, 64);
    const exposed = [...names.values()];
    assert.equal(exposed.length, 2000);
    assert.equal(new Set(exposed).size, 2000);
    assert.ok(exposed.every((n) => n.length === 64 && n.startsWith('up__')));
  });

  it('give a rename its name, and leave out (shadow) a natural name it takes or a reserved one', () => {
    const { names, shadowed } = assignNames([req('gh__a', 'search'), req('search'), req('call_tool')], 64, ['call_tool']);
    assert.equal(names.get('gh__a'), 'search');
    assert.deepEqual(shadowed.sort(), ['call_tool', 'search']);
  });
});
