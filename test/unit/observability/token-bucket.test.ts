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
});
