// RFC 6570 expansion with string values, as completion-values.ts judges a completion value by the URI it
// makes. The cases are the RFC's own examples (§3.2), and a variable without a value.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expandTemplate } from '../../../src/policy/template-expansion.js';

const vars = { var: 'value', hello: 'Hello World!', path: '/foo/bar', x: '1024', y: '768', empty: '' };

describe('expandTemplate', () => {
  it('expands every operator as RFC 6570 §3.2 does', () => {
    const cases: Array<[string, string]> = [
      ['{var}', 'value'],
      ['{hello}', 'Hello%20World%21'],
      ['{+hello}', 'Hello%20World!'],
      ['{+path}/here', '/foo/bar/here'],
      ['{#path,x}/here', '#/foo/bar,1024/here'],
      ['X{.var}', 'X.value'],
      ['{/var,x}/here', '/value/1024/here'],
      ['{;x,y,empty}', ';x=1024;y=768;empty'],
      ['{?x,y,empty}', '?x=1024&y=768&empty='],
      ['?fixed=yes{&x}', '?fixed=yes&x=1024'],
      ['{var:3}', 'val'],
      ['{path}', '%2Ffoo%2Fbar'],
      ['users://{var}/profile', 'users://value/profile'],
      ['{+hello}%2F', 'Hello%20World!%2F'],
    ];
    for (const [template, uri] of cases) assert.equal(expandTemplate(template, vars), uri, template);
    assert.equal(expandTemplate('notes://{id}', { id: 'sé' }), 'notes://s%C3%A9');
  });

  it('cannot tell the URI when a variable has no value, or an expression is not well formed', () => {
    assert.equal(expandTemplate('repos://{owner}/{repo}', { repo: 'x' }), undefined);
    assert.equal(expandTemplate('x://{a b}', { 'a b': 'v' }), undefined);
    assert.equal(expandTemplate('x://{a}}', { a: 'v' }), undefined);
    assert.equal(expandTemplate('x://{__proto__}', {}), undefined);
  });
});
