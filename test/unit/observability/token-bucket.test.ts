import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TokenBucket } from '../../../src/observability/token-bucket.js';

describe('TokenBucket', () => {
  it('starts full, takes what there is, refills at the rate and never past the burst', () => {
    let now = 1_000;
    const bucket = new TokenBucket(10, 5, () => now);
    assert.equal(bucket.take(3), 3);
    assert.equal(bucket.take(3), 2, 'only what is left');
    assert.equal(bucket.take(), 0);
    now += 250; // 2.5 tokens
    assert.equal(bucket.take(5), 2, 'whole tokens only');
    now += 60_000;
    assert.equal(bucket.take(100), 5, 'capped at the burst');
  });

  it('says how long until a whole token, and spend() goes no lower than empty', () => {
    let now = 0;
    const bucket = new TokenBucket(2, 1, () => now);
    assert.equal(bucket.msUntilOne(), 0);
    assert.equal(bucket.take(), 1);
    assert.equal(bucket.msUntilOne(), 500);
    now += 100;
    assert.equal(bucket.msUntilOne(), 400);
    bucket.spend();
    bucket.spend();
    assert.equal(bucket.msUntilOne(), 500, 'spent from 0.2 to 0, not below');
  });

  // Found by a review: every bucket runs on the wall clock (Date.now) by default, and one set back (NTP
  // stepping it, a VM resumed) counted the time "gone back" as tokens taken: an hour back left the bucket
  // 3600 s x rate below empty, so an upstream's list_changed, a client's roots/list_changed or progress
  // waited an hour to be passed on, and stderr lines and warnings were dropped for that hour.
  it('a clock set back takes nothing: the bucket neither empties nor goes below empty', () => {
    let now = 10_000_000;
    const bucket = new TokenBucket(1, 10, () => now);
    assert.equal(bucket.take(9), 9);
    now -= 3_600_000; // the wall clock steps back an hour
    assert.equal(bucket.msUntilOne(), 0, 'the token left is still there');
    assert.equal(bucket.take(), 1);
    assert.equal(bucket.msUntilOne(), 1000, 'then one a second, as before the step');
    now += 1000;
    assert.equal(bucket.take(), 1, 'refilled from where the clock now is');
  });
});
