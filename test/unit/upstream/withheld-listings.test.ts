import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WithheldListings } from '../../../src/upstream/withheld-listings.js';

describe('WithheldListings', () => {
  it('answers a call with nothing withheld (every pinned call but a few) without allocating: one shared, frozen empty list', () => {
    const withheld = new WithheldListings();
    const [a, b] = [{}, {}];
    const none = withheld.against('weather', a);
    assert.equal(none.length, 0);
    assert.equal(withheld.against('echo', b), none, 'a new array for every pinned call');
    assert.ok(Object.isFrozen(none), 'a caller could fill the shared list');

    withheld.mark(a, 'weather', { name: 'weather' });
    assert.equal(withheld.against('echo', b), none);
    assert.deepEqual(withheld.against('weather', b), [[a, { name: 'weather' }]]);
    withheld.clear(a, 'weather');
    assert.equal(withheld.against('weather', b), none);
  });
});
