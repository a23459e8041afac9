import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../../../src/errors.js';
import { StoreHealth } from '../../../src/cluster/store-health.js';

describe('StoreHealth', () => {
  it('is settled until trouble, unsettled for settleMs after the last trouble, then settled again', () => {
    let now = 1_000;
    const h = new StoreHealth(500, () => now);
    assert.equal(h.settled, true);
    h.trouble();
    now += 499;
    assert.equal(h.settled, false);
    h.trouble(); // trouble again: the window restarts from here
    now += 499;
    assert.equal(h.settled, false);
    now += 1;
    assert.equal(h.settled, true);
  });

  it('turns a failed store operation into SWB_STORE_UNAVAILABLE (503) and marks trouble', async () => {
    let now = 0;
    const h = new StoreHealth(100, () => now);
    assert.equal(await h.read(async () => 7), 7);
    assert.equal(h.settled, true);
    await assert.rejects(
      h.read(async () => {
        throw new Error('connect ECONNREFUSED 127.0.0.1:6379');
      }),
      (err: unknown) => err instanceof GatewayError && err.code === 'SWB_STORE_UNAVAILABLE' && err.status === 503 && !err.message.includes('127.0.0.1'),
    );
    assert.equal(h.settled, false);
    now += 100;
    assert.equal(h.settled, true);
    assert.equal(h.recovering().code, 'SWB_STORE_UNAVAILABLE');
  });
});
