import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OWNERSHIP_LISTING_MS, OwnershipListing } from '../../../src/router/ownership-listing.js';

describe('OwnershipListing', () => {
  it('lists once while it is fresh (one in flight is shared, a failed one counts), again once it is old or the lists changed', async () => {
    let now = 1000;
    const listing = new OwnershipListing(() => now);
    let runs = 0;
    let release!: () => void;
    const list = () => {
      runs++;
      return new Promise<void>((resolve, reject) => (release = runs === 1 ? resolve : () => reject(new Error('page 99 failed'))));
    };
    const first = listing.run(list);
    const second = listing.run(list); // while the first runs
    release();
    await Promise.all([first, second]);
    assert.equal(runs, 1);

    now += OWNERSHIP_LISTING_MS - 1;
    await listing.run(list);
    assert.equal(runs, 1);
    now += 1;
    const failing = listing.run(list);
    release();
    await failing; // a failed listing does not reject its callers: they find no owner
    await listing.run(list);
    assert.equal(runs, 2);

    listing.changed();
    const third = listing.run(list);
    release();
    await third;
    assert.equal(runs, 3);
  });
});
