import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { LatestThrottle } from '../../../src/observability/latest-throttle.js';

describe('LatestThrottle', () => {
  it('passes a burst on at once, folds the rest into the latest, and passes that when the rate allows', () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      let t = 0;
      const passed: number[] = [];
      const throttle = new LatestThrottle<number>((v) => passed.push(v), 1, 3, () => t);
      for (let i = 1; i <= 500; i++) throttle.offer(i);
      assert.deepEqual(passed, [1, 2, 3]);
      t += 1000;
      mock.timers.tick(1000);
      assert.deepEqual(passed, [1, 2, 3, 500], 'the last one sent is passed on');
      throttle.offer(501); // the token the folded one took: held again
      assert.deepEqual(passed, [1, 2, 3, 500]);
      t += 1000;
      mock.timers.tick(1000);
      assert.deepEqual(passed, [1, 2, 3, 500, 501]);
    } finally {
      mock.timers.reset();
    }
  });

  it('passes nothing once closed, what it held neither', () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      let t = 0;
      const passed: number[] = [];
      const throttle = new LatestThrottle<number>((v) => passed.push(v), 1, 1, () => t);
      throttle.offer(1);
      throttle.offer(2);
      throttle.close();
      throttle.offer(3);
      t += 5000;
      mock.timers.tick(5000);
      assert.deepEqual(passed, [1]);
    } finally {
      mock.timers.reset();
    }
  });
});
