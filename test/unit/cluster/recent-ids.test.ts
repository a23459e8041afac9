import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RecentIds } from '../../../src/cluster/recent-ids.js';

describe('RecentIds: each id taken once, the oldest forgotten past the bound', () => {
  it('takes an id once', () => {
    const ids = new RecentIds(3);
    assert.equal(ids.first('a'), true);
    assert.equal(ids.first('a'), false);
    assert.equal(ids.first('b'), true);
  });
  it('forgets the oldest past its bound, and only it', () => {
    const ids = new RecentIds(2);
    for (const id of ['a', 'b', 'c']) assert.equal(ids.first(id), true);
    assert.equal(ids.first('c'), false);
    assert.equal(ids.first('b'), false);
    assert.equal(ids.first('a'), true, 'the oldest was forgotten');
  });
});
