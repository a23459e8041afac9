import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DescriptorWatch, descriptorReserve } from '../../../src/edge/descriptor-watch.js';

describe('DescriptorWatch', () => {
  it('keeps a sixteenth of the limit free, 8 to 64', () => {
    assert.equal(descriptorReserve(64), 8);
    assert.equal(descriptorReserve(1024), 64);
    assert.equal(descriptorReserve(480), 30);
    assert.equal(descriptorReserve(1_048_576), 64);
  });

  it('is exhausted once the open descriptors reach the limit less the reserve, counting at most once a second', () => {
    let now = 5_000;
    let open = 100;
    let counts = 0;
    const w = new DescriptorWatch({ limit: 1024, count: () => (counts++, open), now: () => now });
    assert.equal(w.exhausted(), undefined);
    open = 960; // 1024 - 64
    assert.equal(w.exhausted(), undefined, 'the count of a moment ago is reused');
    assert.equal(counts, 1);
    now += 1000;
    assert.equal(w.exhausted(), '960 of at most 1024 file descriptors open');
    open = 959;
    now += 1000;
    assert.equal(w.exhausted(), undefined);
    assert.equal(counts, 3);
  });

  it('is exhausted when no descriptor is left to count them with', () => {
    assert.equal(new DescriptorWatch({ limit: 64, count: () => Number.POSITIVE_INFINITY }).exhausted(), '64 of at most 64 file descriptors open');
  });

  it('says nothing where the limit or the count is unknown', () => {
    assert.equal(new DescriptorWatch({ limit: undefined, count: () => 1_000_000 }).exhausted(), undefined);
    assert.equal(new DescriptorWatch({ limit: 64, count: () => undefined }).exhausted(), undefined);
  });

  it('counts this process\'s own descriptors by default (Linux)', () => {
    const w = new DescriptorWatch({ limit: 16 });
    assert.match(w.exhausted() ?? '', /^\d+ of at most 16 file descriptors open$/, 'a Node.js process holds more than 8 descriptors');
  });
});
