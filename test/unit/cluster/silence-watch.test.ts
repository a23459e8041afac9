import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { watchSilence } from '../../../src/cluster/silence-watch.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('watchSilence', () => {
  it('waits for an owner whose heartbeat is current, and gives up once it lapses', async () => {
    const answers = [true, true, false];
    let asked = 0;
    let silentAt = -1;
    watchSilence(20, async () => answers[asked++]!, () => (silentAt = asked));
    await sleep(200);
    assert.equal(silentAt, 3, 'given up at the first lapsed heartbeat, not before');
    assert.equal(asked, 3, 'not asked again once given up');
  });

  it('gives up when the store cannot say (as a timeout did before)', async () => {
    let silent = false;
    watchSilence(20, () => Promise.reject(new Error('store away')), () => (silent = true));
    await sleep(100);
    assert.ok(silent);
  });

  it('stopped (the answer began, the client left), it asks nothing more and never gives up', async () => {
    let asked = 0;
    let silent = false;
    const stop = watchSilence(20, async () => (asked++, false), () => (silent = true));
    stop();
    await sleep(100);
    assert.equal(asked, 0);
    assert.equal(silent, false);
  });
});
