import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DELIMITER, isValidToolName, prefixed, splitPrefixed } from '../../../src/router/names.js';

describe('prefixed names', () => {
  it('uses "__" as the delimiter', () => {
    assert.equal(DELIMITER, '__');
    assert.equal(prefixed('github', 'create_issue'), 'github__create_issue');
  });

  it('round-trips, including names that themselves contain "__" or "_"', () => {
    for (const [u, n] of [
      ['a', 'x'],
      ['github', 'create_issue'],
      ['my-server', 'do__thing'],
      ['s3', '__private'],
      ['a', 'trailing_'],
    ] as const) {
      assert.deepEqual(splitPrefixed(prefixed(u, n)), { upstream: u, name: n });
    }
  });

  it('splits at the first delimiter', () => {
    assert.deepEqual(splitPrefixed('a__b__c'), { upstream: 'a', name: 'b__c' });
  });

  it('refuses names without a delimiter or with an empty upstream part', () => {
    assert.equal(splitPrefixed('plain'), undefined);
    assert.equal(splitPrefixed('one_underscore'), undefined);
    assert.equal(splitPrefixed('__x'), undefined);
    assert.equal(splitPrefixed(''), undefined);
  });

  it('validates MCP tool names: 1-128 of [A-Za-z0-9_.-]', () => {
    assert.equal(isValidToolName('a'), true);
    assert.equal(isValidToolName('A.b-c_d9'), true);
    assert.equal(isValidToolName('x'.repeat(128)), true);
    assert.equal(isValidToolName('x'.repeat(129)), false);
    assert.equal(isValidToolName(''), false);
    assert.equal(isValidToolName('has space'), false);
    assert.equal(isValidToolName('slash/name'), false);
    assert.equal(isValidToolName('ünï'), false);
  });
});
