import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { closest } from '../../../src/config/did-you-mean.js';

describe('closest: the key a misspelling probably meant', () => {
  const keys = ['command', 'args', 'cwd', 'env', 'maxLineBytes', 'sharing', 'sandbox'];

  it('a typo, a swap of neighbours, another case or separator', () => {
    assert.equal(closest('comand', keys), 'command');
    assert.equal(closest('agrs', keys), 'args');
    assert.equal(closest('max_line_bytes', keys), 'maxLineBytes');
    assert.equal(closest('Sandbox', keys), 'sandbox');
  });

  it('no guess when nothing is close: a wrong suggestion is worse than none', () => {
    assert.equal(closest('image', keys), undefined);
    assert.equal(closest('cmd', keys), undefined);
    assert.equal(closest('x', keys), undefined);
    assert.equal(closest('command', ['command']), undefined, 'a key is not a misspelling of itself');
  });
});
