// The glob rule of tenant policy, argument and confirmation rules and curation: "*" any run, "?" one
// character, the rest literal, the whole value. Checked against the regular expression it used to be
// compiled to, over every short pattern and value of a small alphabet (deterministic, bounded).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { globMatch } from '../../../src/jsonrpc/glob.js';

/** The rule as a regular expression (what globMatch was before it stopped backtracking). */
function reference(pattern: string, value: string): boolean {
  const body = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`, 's').test(value);
}

/** Every string of length 0..max over `alphabet`. */
function strings(alphabet: string, max: number): string[] {
  const out = [''];
  let last = [''];
  for (let n = 1; n <= max; n++) {
    last = last.flatMap((s) => [...alphabet].map((c) => s + c));
    out.push(...last);
  }
  return out;
}

describe('globMatch', () => {
  it('agrees with the regular expression on every pattern and value up to a few characters', () => {
    const patterns = strings('ab*?', 4);
    const values = strings('ab\n', 5);
    for (const p of patterns) for (const v of values) assert.equal(globMatch(p, v), reference(p, v), `${JSON.stringify(p)} ~ ${JSON.stringify(v)}`);
  });

  it('treats regular-expression syntax as literal, and matches names and URIs as the rules write them', () => {
    assert.equal(globMatch('github__delete_*', 'github__delete_repo'), true);
    assert.equal(globMatch('github__delete_*', 'github__get_repo'), false);
    assert.equal(globMatch('a.b', 'axb'), false);
    assert.equal(globMatch('file:///srv/(data)/*', 'file:///srv/(data)/x'), true);
    assert.equal(globMatch('*secret*key*', 'my_secret_api_key'), true);
    assert.equal(globMatch('*secret*key*', 'my_key_secret'), false);
    assert.equal(globMatch('?', '😀'), false, 'one UTF-16 unit, as before');
  });

  it('answers a long value a pattern does not match in one pass (found by a review)', () => {
    // As /^.*secret.*key.*$/ this was quadratic in the value: 1.5 MB took tens of minutes.
    const long = 'secret'.repeat(250_000);
    assert.equal(globMatch('*secret*key*', long), false);
    assert.equal(globMatch('*secret*key*', `${long}key`), true);
    assert.equal(globMatch('github__*_delete_*_all', `github__${'_delete_'.repeat(100_000)}`), false);
  });
});
