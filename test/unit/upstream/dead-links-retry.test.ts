// The sweep of dead links retries a failed sweep at doubling waits (1 s up to 5 min). A sweep that succeeded
// in the meantime (the hourly one, the store back) left the retry pending, so it swept the vault again, for
// nothing, up to five minutes later. Virtual clock (node:test's mock timers); a memory store whose sweeps fail while
// it is "down" (the Redis store failing while its connection is down).
import assert from 'node:assert/strict';
import { afterEach, describe, it, mock } from 'node:test';
import { createLogger } from '../../../src/observability/logger.js';
import { DEAD_LINK_SWEEP_MS, DeadLinks } from '../../../src/upstream/dead-links.js';
import { MemoryVaultStore } from '../../../src/upstream/vault-store.js';

/** A store whose sweeps fail while `down`; the virtual time of every sweep asked of it. */
class FlakyStore extends MemoryVaultStore {
  down = true;
  readonly sweeps: number[] = [];

  override sweepDead(expiredBefore: number): Promise<number> {
    this.sweeps.push(Date.now());
    return this.down ? Promise.reject(new Error('Stream isn\'t writeable')) : super.sweepDead(expiredBefore);
  }
}

/** Lets the sweep's promise callbacks (and the timers they set) run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Advances the virtual clock to `until` (ms) a second at a time, letting each sweep settle. */
async function runTo(until: number): Promise<void> {
  for (let guard = 0; Date.now() < until && guard < 100_000; guard++) {
    mock.timers.tick(Math.min(1000, until - Date.now()));
    await settle();
  }
}

describe('DeadLinks: a retry after a failed sweep', () => {
  afterEach(() => mock.timers.reset());

  it('is dropped when a sweep succeeds before it is due', async () => {
    mock.timers.enable({ apis: ['setTimeout', 'setInterval', 'Date'], now: 0 });
    const store = new FlakyStore();
    const links = new DeadLinks(store, createLogger('silent'));
    links.start();
    await settle();
    // Down for the first hour: retried at 1, 3, 7, … s, then every 5 minutes (3511 s the last before the hour).
    await runTo(DEAD_LINK_SWEEP_MS - 1000);
    assert.equal(store.sweeps.at(-1), 3_511_000, JSON.stringify(store.sweeps));
    store.down = false;
    await runTo(DEAD_LINK_SWEEP_MS);
    assert.equal(store.sweeps.at(-1), DEAD_LINK_SWEEP_MS, 'the hourly sweep ran and succeeded');
    const count = store.sweeps.length;
    // The retry that was due at 3811 s sweeps nothing: the next sweep is the next hour's.
    await runTo(DEAD_LINK_SWEEP_MS + 10 * 60_000);
    assert.deepEqual(store.sweeps.slice(count), [], 'no sweep after the success until the next hour');
    // A failure after that success starts a new run of retries: the first one a second later.
    store.down = true;
    await runTo(2 * DEAD_LINK_SWEEP_MS + 1000);
    assert.deepEqual(store.sweeps.slice(count), [2 * DEAD_LINK_SWEEP_MS, 2 * DEAD_LINK_SWEEP_MS + 1000]);
    await links.close();
  });
});
