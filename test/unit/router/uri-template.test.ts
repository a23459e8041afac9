import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { matchesTemplate, templateMatcher } from '../../../src/router/uri-template.js';

const matches = (template: string, uri: string) => matchesTemplate(templateMatcher(template)!, uri);

describe('which URIs a resource template describes', () => {
  it('reads each kind of expression as what it expands to', () => {
    assert.equal(matches('notes://{id}', 'notes://7'), true);
    assert.equal(matches('notes://{id}', 'notes://alice/7'), false, 'a simple expression stays within a segment');
    assert.equal(matches('notes://{owner}/{id}', 'notes://alice/7'), true);
    assert.equal(matches('notes://{owner}/{id}', 'notes://7'), false);
    assert.equal(matches('file:///{+path}', 'file:///etc/a/b.txt'), true);
    assert.equal(matches('repo://{owner}/{repo}/contents{/path*}', 'repo://o/r/contents/src/a.ts'), true);
    assert.equal(matches('repo://{owner}/{repo}/contents{/path*}', 'repo://o/r/contents'), true);
    assert.equal(matches('search://items{?q,lang}', 'search://items?q=x&lang=en'), true);
    assert.equal(matches('search://items{?q,lang}', 'search://items#x'), false);
    assert.equal(matches('users://{id}/profile', 'users://42/profile'), true);
    assert.equal(matches('users://{id}/profile', 'users://42/settings'), false);
    assert.equal(matches('static://readme', 'static://readme'), true);
    assert.equal(matches('static://readme', 'static://readme2'), false);
  });

  it('takes no template it cannot read, nor one that would claim every URI', () => {
    assert.equal(templateMatcher('notes://{id'), undefined);
    assert.equal(templateMatcher('notes://id}'), undefined);
    assert.equal(templateMatcher('{+uri}'), undefined);
  });

  it('answers a long URI against expressions that could each take its characters (no backtracking)', () => {
    // A backtracking regular expression tries every split of the slashes among the three: days for this one.
    assert.equal(matches('x://{+a}/{+b}/{+c}.json', `x://${'/'.repeat(20_000)}`), false);
    assert.equal(matches('x://{+a}/{+b}/{+c}.json', `x://${'/'.repeat(20_000)}.json`), true);
  });
});
